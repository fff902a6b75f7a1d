package knowledge

import "testing"

// TestRuleKey: the same rule written two ways (case, punctuation, white space, full-width
// forms, another number, a provenance suffix ckpt wrote) has one key; another rule has another.
func TestRuleKey(t *testing.T) {
	for _, tc := range []struct {
		name, a, b string
		same       bool
	}{
		{"identical", "D3: Use early returns", "D3: Use early returns", true},
		{"case", "D3: Use early returns", "D3: use EARLY returns", true},
		{"punctuation", "D3: Don't use try/catch — use early returns.", "D3: dont use try/catch, use early returns", true},
		{"white space", "D3:  use   early\treturns", "D3: use early returns", true},
		{"bullet and checkbox", "- D3: use early returns", "[x] D3: use early returns", true},
		{"full-width colon and letters", "D3：ｕｓｅ early returns", "D3: use early returns", true},
		{"full-width label", "Ｄ３：使用提前返回", "D3: 使用提前返回", true},
		{"chinese punctuation", "D3: 不要用 try/catch —— 使用提前返回", "D3：不要用 try/catch，使用提前返回。", true},
		{"ideographic space", "D3:\u3000不要用 try/catch", "D3: 不要用 try/catch", true},
		{"another number", "D7: Use early returns", "D3: Use early returns", true},
		{"provenance ckpt wrote", "D3: Use early returns (K-1a2b3c4d; from alpha @ 0123456789ab, 2026-05-20T08:00Z)", "D3: Use early returns", true},
		{"continuation line", "D3: Use early\n  returns", "D3: use early returns", true},
		{"another rule", "D3: Use early returns", "D3: Use exceptions", false},
		{"a word added", "D3: Never use try/catch", "D3: use try/catch", false},
		{"punctuation between words", "D3: try/catch", "D3: try catch", true},
		{"words joined", "D3: no tabs", "D3: notabs", false},
		{"spaces around chinese", "D3:不要用try/catch使用提前返回", "D3: 不要用 try/catch 使用提前返回", true},
		{"chinese, another rule", "D3: 不要用 try/catch", "D3: 要用 try/catch", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RuleKey(tc.a) == RuleKey(tc.b); got != tc.same {
				t.Errorf("RuleKey(%q) = %q, RuleKey(%q) = %q; same = %v, want %v", tc.a, RuleKey(tc.a), tc.b, RuleKey(tc.b), got, tc.same)
			}
		})
	}
	if RuleID("D3: Use early returns") != RuleID("- d7：use early returns.") {
		t.Error("RuleID differs for the same rule")
	}
}

func TestIsRuleLine(t *testing.T) {
	for line, want := range map[string]bool{
		"D3: use early returns": true, "- D12: x": true, "Ｄ３：x": true, "d4: x": true,
		"Do this": false, "D: x": false, "see D3: x": false, "- [x] done": false,
	} {
		if got := IsRuleLine(line); got != want {
			t.Errorf("IsRuleLine(%q) = %v, want %v", line, got, want)
		}
	}
}
