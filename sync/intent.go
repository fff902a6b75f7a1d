package sync

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/sections"
	"github.com/ckpt-dev/ckpt/templates"
)

// maxQuote is how long a verbatim request in the intent section may be, in characters; a
// longer one is cut with "..." and a paraphrase line follows it (seed 000, edge cases).
const maxQuote = 200

// settleReplacing applies seed 000's rules to the entries that would replace a section that
// holds one value (the intent, the next action), before any is applied:
//
//   - an [intent] whose request is not committing (seed 000, 1.5: inspecting, or unsure)
//     leaves the intent section as it is and goes to the catch-all, as a quote (seed 000:
//     quotes go to §11);
//   - of several entries for the same such section, the last one takes it and the others,
//     superseded, go to the catch-all with their text, literals included, intact (so a sync
//     never has to abort because a second [intent] replaced the first one's literal).
func settleReplacing(t *checkpoint.Template, rs []routed) {
	catchAll := t.Section(templates.RoleCatchAll)
	if catchAll == "" {
		return // a user template without rules: entries replace as before
	}
	toCatchAll := func(r *routed, why string) {
		r.Role, r.Dest.Section, r.Dest.Why = templates.RoleCatchAll, catchAll, why
	}
	last := map[string]int{} // section -> the index of the entry that takes it
	for i := range rs {
		r := &rs[i]
		// The section decides, as in applyRouted: config may route any tag to a one-value
		// section, or an [intent] elsewhere.
		role := roleOf(t, r.Dest.Section)
		if role == "" {
			role = r.Role
		}
		if r.Dest.Repo != "session" || !replaces(role) {
			continue
		}
		if role == templates.RoleIntent && r.Role == templates.RoleIntent {
			if kind := templates.RequestKind(firstLine(r.Entry.Text)); kind != templates.RequestCommitting {
				toCatchAll(r, kind+" request: the intent is kept")
				continue
			}
		}
		if j, ok := last[string(r.Dest.Section)]; ok {
			toCatchAll(&rs[j], fmt.Sprintf("superseded by the entry at line %d", r.Entry.Line))
		}
		last[string(r.Dest.Section)] = i
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(l)
}

// paraphraseLine is a paraphrase the agent wrote under a long request:
// "  paraphrase: …" or "  改述：…".
var paraphraseLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^\s*[(（]?\s*(?:paraphrase|改述)\s*[:：]\s*(.*?)\s*[)）]?\s*$`)
})

// renderIntent is an [intent] entry as the blockquoted intent section holds it (seed 000, 1):
// the verbatim request in quotes; over maxQuote characters, its first maxQuote characters
// and "...", then a paraphrase line: the one the agent wrote under it, or one that says how
// much was cut and repeats the exact values (literals) the cut took away. Continuation lines
// are kept. A template without a blockquoted intent section gets the request as written.
func renderIntent(t *checkpoint.Template, text string) string {
	_, rest, _ := strings.Cut(text, "\n")
	if t.Spec.Blockquote == "" || sections.ID(t.Spec.Blockquote) != t.Section(templates.RoleIntent) {
		return renderEntry(t, templates.RoleIntent, "intent", text)
	}
	request := requestOf(text)
	var cont []string
	paraphrase := ""
	for _, l := range strings.Split(rest, "\n") {
		if m := paraphraseLine().FindStringSubmatch(l); m != nil && paraphrase == "" {
			paraphrase = m[1]
			continue
		}
		if strings.TrimSpace(l) != "" {
			cont = append(cont, l)
		}
	}
	runes := []rune(request)
	quote := request
	cut := len(runes) > maxQuote
	if cut {
		quote = string(runes[:maxQuote]) + "..."
	}
	out := []string{`> "` + quote + `"`}
	if cut {
		kept := string(runes[:maxQuote])
		var lost []string
		for _, lit := range literals(request) {
			if !strings.Contains(kept, lit) {
				lost = append(lost, lit)
			}
		}
		out = append(out, "", paraphraseText(t, paraphrase, len(runes)-maxQuote, lost))
	}
	out = append(out, cont...)
	return strings.Join(out, "\n")
}

// cutsRequest reports whether an [intent] entry that replaced the intent section was cut to
// maxQuote characters: the full request then lives only in notes.md, which the sync resets.
func cutsRequest(t *checkpoint.Template, rep *Report) bool {
	if t.Spec.Blockquote == "" || sections.ID(t.Spec.Blockquote) != t.Section(templates.RoleIntent) {
		return false
	}
	for _, e := range rep.Entries {
		if e.Dest.Status == "replaced" && e.Dest.Repo == "session" && e.Dest.Section == t.Section(templates.RoleIntent) &&
			len([]rune(requestOf(e.Text))) > maxQuote {
			return true
		}
	}
	return false
}

// requestOf is the verbatim request of an [intent] entry: its first line, without a
// blockquote marker and one pair of quotes.
func requestOf(text string) string {
	first, _, _ := strings.Cut(text, "\n")
	return unquote(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(first), ">")))
}

// paraphraseText is the paraphrase line under a cut request, in the template's language.
func paraphraseText(t *checkpoint.Template, given string, more int, lost []string) string {
	zh := t.Spec.Lang == "zh"
	sep := ", "
	if zh {
		sep = "、"
	}
	var parts []string
	if given != "" {
		parts = append(parts, given)
	} else if zh {
		parts = append(parts, fmt.Sprintf("请求后面还有 %d 个字符", more))
	} else {
		parts = append(parts, fmt.Sprintf("the request goes on for %d more characters", more))
	}
	if len(lost) > 0 {
		if zh {
			parts = append(parts, "其中的精确值："+strings.Join(lost, sep))
		} else {
			parts = append(parts, "its exact values: "+strings.Join(lost, sep))
		}
	}
	if zh {
		return "（改述：" + strings.Join(parts, "；") + "）"
	}
	return "(paraphrase: " + strings.Join(parts, "; ") + ")"
}

// unquote takes one pair of quotes off a request written in quotes.
func unquote(s string) string {
	for _, q := range [][2]string{{`"`, `"`}, {"“", "”"}, {"「", "」"}, {"『", "』"}} {
		if strings.HasPrefix(s, q[0]) && strings.HasSuffix(s, q[1]) && len(s) >= len(q[0])+len(q[1]) {
			return s[len(q[0]) : len(s)-len(q[1])]
		}
	}
	return s
}
