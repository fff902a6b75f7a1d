package templates

import (
	"regexp"
	"sync"
)

// Keyword rules for untagged notes entries, tried in order. They are documented in
// docs/sync.md; keep the two in step.
var (
	kwDecision = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(decided|decision|we chose|chose|instead of|rather than|in favou?r of)\b|决定|决策|采用`)
	})
	kwBlocker = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(blocked|blocker|blocking|waiting (for|on))\b|阻塞`)
	})
	kwBug = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(bug|crash(es|ed)?|panics?|regression|fixed by)\b|崩溃|修复`)
	})
	kwTask = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^(todo|to do|need to|next:)|^\(P[0-9]\)`) })
	kwRule = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^(always|never|do not|don't)\b|^(始终|总是|不要|永远不要)`)
	})
)

func sixSpec() Spec {
	return Spec{
		Notes:  "notes",
		Memory: "memory-en",
		Meta:   []string{"last_updated", "session_id", "delta_since_last"},
		MaxOpen: map[string]int{
			"📋": 5,
		},
		Roles: map[Role]string{
			RoleIntent:    "🎯",
			RoleTasks:     "📋",
			RoleCompleted: "✅",
			RoleDecisions: "🔑",
			RoleDelta:     "📡",
			RoleCatchAll:  "⚠️",
		},
		Routes: map[string]Role{
			"decision": RoleDecisions,
			"task":     RoleTasks,
			"next":     RoleTasks,
			"done":     RoleCompleted,
			"blocker":  RoleCatchAll,
			"note":     RoleCatchAll,
			"intent":   RoleIntent,
			"rule":     RoleCatchAll,
			"fact":     RoleCatchAll,
			"literal":  RoleCatchAll,
		},
		Durable: map[string]Role{"rule": RoleRules, "fact": RoleFacts, "decision": RoleDecisions},
		Keywords: []Keyword{
			{Pattern: kwBlocker, Tag: "blocker"},
			{Pattern: kwDecision, Tag: "decision"},
			{Tag: "done", Match: IsStatusLanguage},
			{Pattern: kwTask, Tag: "task"},
		},
		Budgets: map[string]int{
			"🎯": 1024, "📋": 2048, "✅": 4096, "🔑": 4096, "⚠️": 4096,
		},
		SpillIndex: "- See %s (%d items) - %s",
		Rolling:    []string{"🎯", "📡"},
	}
}

func elevenSpec(notes, memory, empty, spill, lang string) Spec {
	return Spec{
		Lang:       lang,
		Notes:      notes,
		Memory:     memory,
		Blockquote: "§1",
		Roles: map[Role]string{
			RoleIntent:     "§1",
			RoleNext:       "§2",
			RoleDirectives: "§3",
			RoleTasks:      "§4",
			RoleStatus:     "§5",
			RoleCompleted:  "§5",
			RoleDecisions:  "§10",
			RoleCatchAll:   "§11",
			"files":        "§6",
			"knowledge":    "§7",
			"errors":       "§8",
			"resources":    "§9",
		},
		Routes: map[string]Role{
			"intent":   RoleIntent,
			"next":     RoleNext,
			"rule":     RoleDirectives,
			"literal":  RoleDirectives,
			"task":     RoleStatus,
			"status":   RoleStatus,
			"done":     RoleStatus,
			"file":     "files",
			"fact":     "knowledge",
			"bug":      "errors",
			"blocker":  "errors",
			"resource": "resources",
			"decision": RoleDecisions,
			"open":     RoleCatchAll,
			"note":     RoleCatchAll,
		},
		Durable: map[string]Role{"rule": RoleRules, "fact": RoleFacts, "decision": RoleDecisions},
		Keywords: []Keyword{
			{Pattern: kwDecision, Tag: "decision"},
			{Pattern: kwBug, Tag: "bug"},
			{Pattern: kwBlocker, Tag: "blocker"},
			{Tag: "done", Match: IsStatusLanguage},
			{Pattern: kwRule, Tag: "rule"},
			{Pattern: kwTask, Tag: "task"},
		},
		Budgets: map[string]int{
			"§1": 2048, "§2": 1024, "§3": 2048, "§5": 4096, "§6": 4096, "§7": 4096,
			"§8": 4096, "§9": 2048, "§10": 4096, "§11": 2048,
		},
		Empty:      empty,
		SpillIndex: spill,
		// Intent, next action, the task tree (the task database's), current work, the files
		// being edited and live resources describe the moment, not accumulated knowledge.
		Rolling: []string{"§1", "§2", "§4", "§5", "§6", "§9"},
	}
}

func memorySpec(rules, facts, decisions, context string) Spec {
	return Spec{
		Roles: map[Role]string{
			RoleRules:     rules,
			RoleFacts:     facts,
			RoleDecisions: decisions,
			RoleContext:   context,
		},
	}
}
