package templates

import (
	"regexp"
	"strings"
	"sync"
)

// Status language (seed 000, §3: "X COMPLETE / X done / X partially complete") reports that
// something is finished. It is told apart from a directive that uses the same words by its
// shape: a subject, then the status word at the end of a clause, or the status word with a
// colon before the subject, and no word that makes the line a rule about when or how.
var (
	// statusEnd: "T3 done", "Backfill is done.", "Phase 2 COMPLETE", "T4 — partially
	// complete", "the diff: done"; Chinese "迁移已完成", "T3 完成", "回填部分完成".
	statusEnd = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^\S.*?(?:\s+|\s*[:：\-–—]+\s*)(?:(?:is|are|was|were|now|all|fully)\s+)*(?:partially\s+)?(?:done|complete|completed|finished)\s*[.!。！✅]*$` +
			`|^\S.*?\s*(?:已经完成|已完成|部分完成|全部完成|完成了|完成)\s*[.!。！✅]*$`)
	})
	// statusStart: "Done: T3", "COMPLETE – the backfill", "Partially complete: T4",
	// "Finished the backfill", "Shipped 4.18"; "已完成：T3".
	statusStart = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^(?:partially\s+)?(?:done|complete|completed|finished)\s*[:：\-–—]+\s*\S` +
			`|^(?:finished|completed|shipped|fixed|merged)\s+\S|^done\s+with\s+\S` +
			`|^(?:已完成|部分完成|完成)\s*[:：]\s*\S`)
	})
	// directiveWord: a word that makes a line a rule about when or how, whatever status words
	// it holds ("Don't mark a migration done until the shadow-read diff is empty").
	directiveWord = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(?:don'?t|do not|never|always|must|should|shall|only|until|unless|before|after|when|whenever|if|once|ensure|make sure|avoid|please)\b` +
			`|不要|^别[^名人的处]|永远|始终|总是|必须|应该|只有|只在|直到|之前|之后|确保|务必|避免|^请[^求教柬假]|如果|一旦`)
	})
	// imperative: a line that starts by telling the agent to do something.
	imperative = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^(?:mark|keep|use|run|write|treat|call|report|say|consider|leave|get|make|set|let|stop|start|check|verify|list|show|ask|tell|prefer|wait|declare|flag|log|note)\b|^(?:标记|保持|使用|运行|写|视为|报告|认为|等待|检查|确认)`)
	})
	// clauseBreak splits a line into clauses: "T3 done; T4 next", "Phase 2 COMPLETE —
	// phase 3 starts", "T3 done (merged in #412)".
	clauseBreak = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`[,;，；。(（]|\s[—–]\s|\s--?\s`)
	})
	// parenthesized is a remark in parentheses, which does not make a line a directive:
	// "Shadow reads: partially complete (EU only)".
	parenthesized = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\([^()]*\)|（[^（）]*）`) })
	colonBreak    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[:：]\s*`) })
)

// IsStatusLanguage reports whether a line (a bullet or a checkbox before it is ignored) is
// status language: it reports that something is done, complete or partially complete, in
// English or Chinese, rather than saying how to work.
func IsStatusLanguage(line string) bool {
	s := strings.TrimSpace(line)
	for _, p := range []string{"- ", "* ", "+ ", "[ ] ", "[x] ", "[X] "} {
		s = strings.TrimSpace(strings.TrimPrefix(s, p))
	}
	if s == "" || directiveWord().MatchString(parenthesized().ReplaceAllString(s, "")) || imperative().MatchString(s) {
		return false
	}
	if statusEnd().MatchString(s) || statusStart().MatchString(s) {
		return true
	}
	for _, c := range clauseBreak().Split(s, -1) {
		if isStatusClause(c) {
			return true
		}
		// "Migration partially complete: backfill left"
		if parts := colonBreak().Split(c, 2); len(parts) == 2 && isStatusClause(parts[0]) {
			return true
		}
	}
	return false
}

func isStatusClause(c string) bool {
	c = strings.TrimSpace(c)
	return c != "" && (statusEnd().MatchString(c) || statusStart().MatchString(c))
}
