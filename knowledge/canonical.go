package knowledge

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// provenanceSuffix is the provenance ckpt writes after an entry it adds to MEMORY.md:
// "(K-1a2b3c4d; from alpha @ 0123456789ab, 2026-05-20T08:00Z)".
var provenanceSuffix = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\s*\((K-[0-9a-f]{8,})(?:;[^()]*)?\)\s*$`)
})

// ruleLabel is a project rule's label, "D3:" or "D3：".
var ruleLabel = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[Dd]\d+\s*[:：]\s*`) })

// Canonical is the text by which ckpt recognises the same entry written two ways: the item's
// prefix and a provenance suffix ckpt wrote are dropped, full-width forms become their ASCII
// forms (Ａ→A, ：→:, the ideographic space → a space), letters are lower-cased, apostrophes
// are dropped, other punctuation and symbols separate words like white space, and words are
// joined by one space where both sides are written with spaces (Latin letters, digits), by
// none next to Chinese.
//
//	"- D3: Don't use try/catch — use early returns."  →  "d3 dont use try catch use early returns"
//	"D3：不要用 try/catch，使用提前返回。"             →  "d3 不要用try catch使用提前返回"
func Canonical(s string) string {
	s = NormText(s)
	s = provenanceSuffix().ReplaceAllString(s, "")
	var b strings.Builder
	var last rune // the last rune written
	gap := false  // a word break since it
	for _, r := range foldWidth(s) {
		switch {
		case r == '\'' || r == '’' || r == '‘' || unicode.Is(unicode.Mn, r):
			// dropped: "don't" is "dont"
		case unicode.IsSpace(r), unicode.IsPunct(r), unicode.IsSymbol(r), unicode.IsControl(r):
			gap = last != 0
		default:
			if gap && spaced(last) && spaced(r) {
				b.WriteByte(' ')
			}
			gap = false
			r = unicode.ToLower(r)
			b.WriteRune(r)
			last = r
		}
	}
	return b.String()
}

// spaced reports whether words of r's script are written with spaces between them: not
// Chinese, Japanese or Korean.
func spaced(r rune) bool {
	return !unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// RuleKey is a project rule's Canonical text without its "Dn:" label: the same rule under
// two numbers is one rule.
func RuleKey(s string) string {
	return Canonical(ruleLabel().ReplaceAllString(foldWidth(NormText(s)), ""))
}

// IsRuleLine reports whether an item is a project rule line, "D3: …" (seed 000's D1–D12).
func IsRuleLine(item string) bool { return ruleLabel().MatchString(foldWidth(NormText(item))) }

// foldWidth turns full-width forms into their ASCII forms and the ideographic space into a
// space.
func foldWidth(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\u3000':
			return ' '
		case r >= '\uFF01' && r <= '\uFF5E':
			return r - 0xFEE0
		}
		return r
	}, s)
}
