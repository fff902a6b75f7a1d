// Package secrets finds possible secrets in text. Checkpoints copy literals verbatim, API
// tokens included, and sessions are pushed to git remotes, so ckpt looks for secrets in what
// would leave before a push, and `ckpt check` warns about the same findings.
//
// It is pure, like sections: bytes in, findings out; no files, no git.
package secrets

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/ckpt-dev/ckpt/sections"
)

// Rule is one kind of secret that Scan looks for. ID is stable: allowlists
// ("rule:ID") and scripts refer to it.
type Rule struct {
	ID, Description string

	re    *regexp.Regexp
	group int // submatch holding the secret; 0 for the whole match
	// anchors are lower-case literals that every match contains: the regexp runs only on
	// lines that hold one, which keeps a scan fast on text that holds no secret.
	anchors []string
	// find, when set, replaces re: for matches that a regexp cannot find in linear time.
	find func(src []byte) []secretMatch
	// keyed finds need a key, on the match's line, that holds one of keyWords: find then
	// runs only on the lines that hold one.
	keyed bool
	// fallback rules are weaker signals: a match that overlaps what another rule already
	// matched is the same secret, reported once under the more specific rule.
	fallback bool
	// minEntropy (bits per character) below which a match is a placeholder such as a token
	// prefix followed by a run of x's.
	minEntropy float64
	// trim is cut from the end of a match: punctuation that ends a sentence, not the value.
	trim string
	// long values (PEM blocks) are long enough that random text holds placeholder words
	// like "your" by chance, so only syntactic placeholders rule them out.
	long bool
	// accept, when set, has the last word on a match, given the key it is assigned to.
	accept func(key, value string) bool
}

// Finding is one possible secret.
type Finding struct {
	Line    int         // 1-based line where the secret starts
	Section sections.ID // "" in the preamble
	Rule    string      // the Rule's ID
	// Redacted shows at most the first and last 4 characters ("ghp_…9f2c"), fewer for short
	// values, so that a report never repeats the secret.
	Redacted string
	// Value is the secret itself, for allowlists and callers; it is never serialized.
	Value string `json:"-"`
}

// secretQuote is a quote or backtick that may surround a value.
const secretQuote = "[\"'`]"

// secretRules are compiled on first use: most ckpt commands never scan for secrets.
var secretRules = sync.OnceValue(func() []Rule {
	return []Rule{
		{
			ID: "aws-access-key-id", Description: "AWS access key id (AKIA… or ASIA… and 16 more)",
			re:      regexp.MustCompile(`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`),
			anchors: []string{"akia", "asia"}, minEntropy: 2.5,
		},
		{
			ID: "aws-secret-access-key", Description: "AWS secret access key after aws_secret_access_key= or the like",
			re: regexp.MustCompile(`(?i:aws[_.-]?secret[_.-]?(?:access[_.-]?)?key|secret[_.-]?access[_.-]?key)` +
				secretQuote + `?[ \t]*(?::=|=>|=|:)[ \t]*` + secretQuote + `?([A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|$)`),
			group: 1, anchors: []string{"secret"}, minEntropy: 3,
		},
		{
			ID: "github-token", Description: "GitHub token (ghp_, gho_, ghu_, ghs_, ghr_)",
			re:      regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{36}\b`),
			anchors: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, minEntropy: 2.5,
		},
		{
			ID: "github-fine-grained-pat", Description: "GitHub fine-grained personal access token (github_pat_)",
			re:      regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{40,}`),
			anchors: []string{"github_pat_"}, minEntropy: 2.5,
		},
		{
			ID: "gitlab-token", Description: "GitLab personal access token (glpat-)",
			re:      regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]+)*`),
			anchors: []string{"glpat-"}, minEntropy: 2.5,
		},
		{
			// A numeric team or user id follows the prefix, which sets tokens apart from prose
			// like "xoxb-your-token".
			ID: "slack-token", Description: "Slack token (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-)",
			re:      regexp.MustCompile(`\bxox[abprs]-(?:[0-9]+-)+[A-Za-z0-9][A-Za-z0-9-]{7,}`),
			anchors: []string{"xox"}, minEntropy: 2.5,
		},
		{
			ID: "slack-webhook", Description: "Slack incoming webhook URL (hooks.slack.com)",
			re:      regexp.MustCompile(`https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{20,}`),
			anchors: []string{"hooks.slack.com"}, minEntropy: 2.5,
		},
		{
			ID: "stripe-live-key", Description: "Stripe live secret or restricted key (sk_live_, rk_live_)",
			re:      regexp.MustCompile(`\b[rs]k_live_[A-Za-z0-9]{20,}\b`),
			anchors: []string{"k_live_"}, minEntropy: 2.5,
		},
		{
			ID: "google-api-key", Description: "Google API key (AIza and 35 more)",
			re:    regexp.MustCompile(`\b(AIza[0-9A-Za-z_-]{35})(?:[^0-9A-Za-z_-]|$)`),
			group: 1, anchors: []string{"aiza"}, minEntropy: 2.5,
		},
		{
			// sk-ant- is not matched here: "ant" is too short for the second form and the
			// first form names its kinds.
			ID: "openai-api-key", Description: "OpenAI API key (sk-proj-, sk-svcacct-, sk-admin-, long sk-)",
			re:      regexp.MustCompile(`\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|\bsk-[A-Za-z0-9]{32,}\b`),
			anchors: []string{"sk-"}, minEntropy: 2.5,
		},
		{
			ID: "anthropic-api-key", Description: "Anthropic API key (sk-ant-)",
			re:      regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{20,}`),
			anchors: []string{"sk-ant-"}, minEntropy: 2.5,
		},
		{
			ID: "huggingface-token", Description: "Hugging Face token (hf_ and 30 or more letters)",
			re:      regexp.MustCompile(`\bhf_[A-Za-z]{30,}\b`),
			anchors: []string{"hf_"}, minEntropy: 2.5,
		},
		{
			ID: "npm-token", Description: "npm access token (npm_ and 36 more)",
			re:      regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}\b`),
			anchors: []string{"npm_"}, minEntropy: 2.5,
		},
		{
			ID: "private-key", Description: "PEM private key block (-----BEGIN … PRIVATE KEY-----)",
			find: privateKeyBlocks, minEntropy: 2.5, long: true,
		},
		{
			// Header and payload are both JSON objects, so both start with eyJ ("{\"").
			ID: "jwt", Description: "JSON Web Token (eyJ….eyJ….signature)",
			re:      regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{8,}`),
			anchors: []string{"eyj"}, minEntropy: 2.5,
		},
		{
			// The value is the password; a DSN with a user and no password has nothing to leak.
			ID: "url-credentials", Description: "password in a URL (scheme://user:password@host)",
			re:    regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@"'` + "`" + `<>]*:([^\s/?#@"'` + "`" + `<>]{3,})@[A-Za-z0-9\[]`),
			group: 1, anchors: []string{"://"},
			fallback: true,
		},
		{
			ID: "generic-secret", Description: "high-entropy value assigned to a secret-sounding key (KEY=…, key: …)",
			find:  func(src []byte) []secretMatch { return secretAssignments(src, secretKey) },
			keyed: true, fallback: true, minEntropy: 3.5, trim: ".,;:!?)]}*",
			accept: genericSecret,
		},
		{
			// Weak passwords have low entropy: what sets them apart is the assignment itself
			// (config syntax, a quoted value, or a value that ends the line).
			ID: "generic-password", Description: "literal value assigned to a password, secret, token or API key (password = …, token: …)",
			find:  passwordAssignments,
			keyed: true, fallback: true, trim: ".,;",
			accept: literalPassword,
		},
	}
})

// Rules lists the rules Scan applies, in the order it applies them.
func Rules() []Rule {
	return append([]Rule(nil), secretRules()...)
}

// Scan returns the possible secrets in src, in order. level is the section heading
// level, as for Parse (0 infers it); it only serves to name each secret's section. Fenced
// code is scanned like any other text: it leaves with a push all the same.
//
// A secret is reported once per line, rule and value. Where a specific rule (a token format)
// and a fallback rule (url-credentials, generic-secret) match the same text, only the
// specific one is reported, even when the allowlist suppresses it. Placeholders (hf_xxx,
// <your-token>, ${TOKEN}, changeme, runs of x), elided values ("sk-proj-abc…"), commit
// hashes, UUIDs, identifiers, code, paths, flags and URLs without a password are not secrets.
//
// Each entry of allow suppresses findings:
//
//	VALUE        a secret whose value is exactly VALUE (for url-credentials: the password)
//	rule:ID      every finding of the rule ID (see Rules)
//	prefix:XYZ   every secret whose value starts with XYZ (an empty XYZ matches nothing)
//
// Empty entries are ignored.
func Scan(src []byte, level int, allow []string) []Finding {
	return scan(src, allow, func() *sections.Document { return sections.Parse(src, sections.Options{Level: level}) }, false)
}

// Check returns a sections.Rules.Extra hook for sections.Check that reports every possible
// secret as a warning, never an error: whether a warning blocks a push is the caller's
// decision. allow is as for Scan.
func Check(allow []string) func(*sections.Document) []sections.Finding {
	return func(d *sections.Document) []sections.Finding {
		var fs []sections.Finding
		for _, s := range scan(d.Render(), allow, func() *sections.Document { return d }, false) {
			fs = append(fs, sections.Finding{
				Line:     s.Line,
				Severity: sections.Warning,
				Section:  s.Section,
				Message:  fmt.Sprintf("possible secret (%s): %s", s.Rule, s.Redacted),
			})
		}
		return fs
	}
}

// A scan looks first for literals: every match of a rule with anchors holds one of its
// anchors, and every key the assignment rules accept holds one of keyWords, all on the
// match's own line (no rule but private-key matches across a line break; it has its own
// literal). One pass over the text finds them all; a rule then runs only on the lines
// that hold one of its literals, and a text without any is done with. FuzzPrefilter
// holds the result to a scan that runs every rule over the whole text.

// keyWords are in every key name that secretKey or passwordKey accepts (lower case): each
// secret word and suffix holds one.
var keyWords = []string{"key", "token", "secret", "pass", "pwd", "auth", "cred", "priv"}

// pemLiteral is in every match of private-key (pemBegin's regular expression).
var pemLiteral = []byte("PRIVATE KEY")

// lowerASCII lower-cases ASCII letters only, as the anchors are compared.
var lowerASCII = func() (t [256]byte) {
	for i := range t {
		c := byte(i)
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		t[i] = c
	}
	return t
}()

// prefilter finds the literals of the rules in one pass.
type prefilter struct {
	lits  []string             // lower case, 2 bytes or more
	rules [][]int              // the rules (indexes into secretRules) that each literal serves
	first [256][]int           // literals by first byte
	pairs [1 << 16 / 64]uint64 // set for each literal's first two bytes
}

var thePrefilter = sync.OnceValue(func() *prefilter {
	p := &prefilter{}
	rules := secretRules()
	add := func(lit string, rule int) {
		for i, l := range p.lits {
			if l == lit {
				p.rules[i] = append(p.rules[i], rule)
				return
			}
		}
		p.lits = append(p.lits, lit)
		p.rules = append(p.rules, []int{rule})
		p.first[lit[0]] = append(p.first[lit[0]], len(p.lits)-1)
		k := uint16(lit[0])<<8 | uint16(lit[1])
		p.pairs[k>>6] |= 1 << (k & 63)
	}
	for i := range rules {
		r := &rules[i]
		switch {
		case r.re != nil:
			for _, a := range r.anchors {
				add(a, i)
			}
		case r.keyed:
			for _, w := range keyWords {
				add(w, i)
			}
		}
	}
	return p
})

// span is a line: src[s:e], its line break included.
type span struct{ s, e int }

// lines returns, for each rule, the lines of src that hold one of its literals, in order.
func (p *prefilter) lines(src []byte, nrules int) [][]span {
	var out [][]span
	cur := span{-1, -1} // the line of the last literal found
	for i := 0; i+1 < len(src); i++ {
		a := lowerASCII[src[i]]
		k := uint16(a)<<8 | uint16(lowerASCII[src[i+1]])
		if p.pairs[k>>6]&(1<<(k&63)) == 0 {
			continue
		}
		for _, li := range p.first[a] {
			lit := p.lits[li]
			if !hasLowerPrefix(src[i:], lit) {
				continue
			}
			if i >= cur.e {
				cur.s = bytes.LastIndexByte(src[:i], '\n') + 1
				cur.e = len(src)
				if j := bytes.IndexByte(src[i:], '\n'); j >= 0 {
					cur.e = i + j + 1
				}
			}
			if out == nil {
				out = make([][]span, nrules)
			}
			for _, r := range p.rules[li] {
				if n := len(out[r]); n == 0 || out[r][n-1] != cur {
					out[r] = append(out[r], cur)
				}
			}
		}
	}
	return out
}

// hasLowerPrefix reports whether b, lower-cased, starts with lit.
func hasLowerPrefix(b []byte, lit string) bool {
	if len(b) < len(lit) {
		return false
	}
	for i := 0; i < len(lit); i++ {
		if lowerASCII[b[i]] != lit[i] {
			return false
		}
	}
	return true
}

// secretMatch is a candidate secret: src[s:e], and the key it is assigned to, if known.
type secretMatch struct {
	s, e int
	key  string
	// sep is the offset of the assignment's separator (= or :), for rules that judge its form.
	sep int
}

// matches returns the rule's candidates in src, in order, looking only at lines when
// lines is not nil (all: the whole text).
func (r *Rule) matches(src []byte, lines []span, all bool) []secretMatch {
	if all || r.find != nil && !r.keyed {
		return r.findIn(src, 0)
	}
	var out []secretMatch
	for _, l := range lines {
		out = append(out, r.findIn(src[l.s:l.e], l.s)...)
	}
	return out
}

// findIn returns the rule's candidates in b, which starts at offset base of the text.
func (r *Rule) findIn(b []byte, base int) []secretMatch {
	var out []secretMatch
	if r.find != nil {
		out = r.find(b)
		for i := range out {
			out[i].s += base
			out[i].e += base
			out[i].sep += base
		}
		return out
	}
	for _, m := range r.re.FindAllSubmatchIndex(b, -1) {
		if s := m[2*r.group]; s >= 0 {
			out = append(out, secretMatch{s: base + s, e: base + m[2*r.group+1]})
		}
	}
	return out
}

var (
	// Key material must follow the BEGIN line (real or JSON-escaped line breaks, PEM headers
	// allowed), so that naming the format in prose is not a finding.
	pemBegin = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----` +
			`(?:\s|\\[rn]|[A-Za-z-]+:[^\r\n\\]*)*[A-Za-z0-9+/=]{32,}`)
	})
	pemEnd = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----`) })
)

// privateKeyBlocks finds PEM private key blocks. A block runs to its END line when there is one
// before the next block; END lines are looked up once, not once per block, to stay linear.
func privateKeyBlocks(src []byte) []secretMatch {
	if !bytes.Contains(src, pemLiteral) {
		return nil
	}
	begins := pemBegin().FindAllIndex(src, -1)
	if begins == nil {
		return nil
	}
	ends := pemEnd().FindAllIndex(src, -1)
	out := make([]secretMatch, len(begins))
	for i, b := range begins {
		out[i] = secretMatch{s: b[0], e: b[1]}
		j := sort.Search(len(ends), func(j int) bool { return ends[j][0] >= b[1] })
		if j < len(ends) && (i+1 == len(begins) || ends[j][1] <= begins[i+1][0]) {
			out[i].e = ends[j][1]
		}
	}
	return out
}

// secretAssignments finds the values of KEY=VALUE, KEY: VALUE, KEY := VALUE and KEY => VALUE
// whose key name keyOK accepts. Quotes and backticks may surround the key and the value,
// Markdown bold the key, and "Bearer " or the like may come before the value.
func secretAssignments(src []byte, keyOK func(string) bool) []secretMatch {
	var out []secretMatch
	delim := -1 // the end of the last value run scanned; runs never hold a delimiter
	last := -1  // the end of the last value found: "auth: token=…" is one value, not two
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c != '=' && c != ':' {
			continue
		}
		// The key, backwards from the separator.
		j := i
		for j > 0 && i-j < 16 && (src[j-1] == ' ' || src[j-1] == '\t') {
			j--
		}
		for n := 0; n < 2 && j > 0 && strings.IndexByte("\"'`*", src[j-1]) >= 0; n++ {
			j--
		}
		ke := j
		for j > 0 && ke-j < 128 && isKeyByte(src[j-1]) {
			j--
		}
		if j == ke || !keyOK(string(src[j:ke])) {
			continue
		}
		// The value, forwards.
		k := i + 1
		if k < len(src) && (c == ':' && src[k] == '=' || c == '=' && src[k] == '>') {
			k++
		}
		for k < len(src) && (src[k] == ' ' || src[k] == '\t') {
			k++
		}
		if k < len(src) && strings.IndexByte("\"'`", src[k]) >= 0 {
			k++
		}
		k = skipScheme(src, k)
		if k < last {
			continue // inside a value found already, which keeps the scan linear
		}
		if delim < k {
			delim = k
			for delim < len(src) && !isValueEnd(src[delim]) {
				delim++
			}
		}
		if delim > k {
			out = append(out, secretMatch{s: k, e: delim, key: string(src[j:ke]), sep: i})
			last = delim
		}
	}
	return out
}

// skipScheme skips an HTTP authorization scheme ("Bearer ") at src[k:].
func skipScheme(src []byte, k int) int {
	for _, s := range []string{"bearer", "basic", "token"} {
		if n := len(s); k+n < len(src) && strings.EqualFold(string(src[k:k+n]), s) && (src[k+n] == ' ' || src[k+n] == '\t') {
			k += n
			for k < len(src) && (src[k] == ' ' || src[k] == '\t') {
				k++
			}
			return k
		}
	}
	return k
}

func isKeyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

func isValueEnd(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f', '"', '\'', '`', '\\': // a backslash starts an escape: "…\n"
		return true
	}
	return false
}

// scan scans src, the rendering of the document doc returns (parsed only to name the
// sections of findings). plain runs every rule over the whole text, without the
// prefilter: the reference the prefilter is tested against.
func scan(src []byte, allow []string, doc func() *sections.Document, plain bool) []Finding {
	rules := secretRules()
	var lines [][]span
	if !plain {
		lines = thePrefilter().lines(src, len(rules))
		if lines == nil && !bytes.Contains(src, pemLiteral) {
			return nil
		}
	}
	var ends []int
	var d *sections.Document
	sectionAt := func(o int) sections.ID {
		if d == nil {
			// Section boundaries come from the document's byte layout, not from
			// Section.Line, which an edited document may not keep up to date.
			d = doc()
			ends = make([]int, len(d.Sections))
			off := len(d.Preamble)
			for i := range d.Sections {
				off += d.Sections[i].Len()
				ends[i] = off
			}
		}
		if i := sort.SearchInts(ends, o+1); o >= len(d.Preamble) && i < len(ends) {
			return d.Sections[i].ID
		}
		return ""
	}

	type hit struct {
		Finding
		start int
	}
	var hits []hit
	var covered []byte // 1 where earlier rules matched, allowlisted or not
	type dedupKey struct {
		line      int
		rule, val string
	}
	seen := map[dedupKey]bool{}
	for i := range rules {
		r := &rules[i]
		var ls []span
		if lines != nil {
			ls = lines[i]
		}
		for _, m := range r.matches(src, ls, plain) {
			s, e := m.s, m.e
			for e > s && strings.IndexByte(r.trim, src[e-1]) >= 0 {
				e--
			}
			if rest := src[e:]; bytes.HasPrefix(rest, []byte("...")) || bytes.HasPrefix(rest, []byte("…")) {
				continue // elided: what is left is not the secret
			}
			v := string(src[s:e])
			if v == "" || isPlaceholder(v, !r.long) || shannonEntropy(v) < r.minEntropy || (r.accept != nil && !r.accept(m.key, v)) {
				continue
			}
			if covered == nil {
				covered = make([]byte, len(src))
			}
			if r.fallback && bytes.IndexByte(covered[s:e], 1) >= 0 {
				continue
			}
			for i := s; i < e; i++ {
				covered[i] = 1
			}
			line := bytes.Count(src[:s], []byte{'\n'}) + 1
			k := dedupKey{line, r.ID, v}
			if seen[k] || secretAllowed(allow, r.ID, v) {
				seen[k] = true
				continue
			}
			seen[k] = true
			hits = append(hits, hit{Finding{Line: line, Section: sectionAt(s), Rule: r.ID, Redacted: redactSecret(v), Value: v}, s})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].start < hits[j].start })
	out := make([]Finding, len(hits))
	for i, h := range hits {
		out[i] = h.Finding
	}
	return out
}

func secretAllowed(allow []string, rule, v string) bool {
	for _, a := range allow {
		if a == "" {
			continue
		}
		if a == v {
			return true
		}
		if id, ok := strings.CutPrefix(a, "rule:"); ok && id == rule {
			return true
		}
		if p, ok := strings.CutPrefix(a, "prefix:"); ok && p != "" && strings.HasPrefix(v, p) {
			return true
		}
	}
	return false
}

// redactSecret keeps at most 4 characters at each end, and never more than a quarter of the value
// at each end, so that short secrets are not given away either.
func redactSecret(v string) string {
	r := []rune(v)
	k := min(4, len(r)/4)
	return string(r[:k]) + "…" + string(r[len(r)-k:])
}

// shannonEntropy is the Shannon entropy of v in bits per character.
func shannonEntropy(v string) float64 {
	counts := map[rune]int{}
	n := 0
	for _, c := range v {
		counts[c]++
		n++
	}
	h := 0.0
	for _, c := range counts {
		p := float64(c) / float64(n)
		h -= p * math.Log2(p)
	}
	return h
}

var (
	envReference = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:\$[A-Za-z_][A-Za-z0-9_]*|%[A-Za-z_][A-Za-z0-9_]*%)$`)
	})
	// Markers of text standing in for a value: templates, elisions, redactions.
	placeholderMarks = []string{"${", "$(", "{{", "<", ">", "%s", "…", "..."}
	placeholderWords = []string{"xxxx", "****", "your", "example", "placeholder", "changeme", "change_me",
		"redacted", "dummy", "replace", "insert"}
	placeholderValues = map[string]bool{"password": true, "passwd": true, "pass": true, "pwd": true,
		"secret": true, "token": true, "apikey": true, "api_key": true, "foo": true, "bar": true,
		"baz": true, "test": true}
)

// isPlaceholder reports whether v stands in for a secret instead of being one. words adds the
// tests for tell-tale words.
func isPlaceholder(v string, words bool) bool {
	for _, m := range placeholderMarks {
		if strings.Contains(v, m) {
			return true
		}
	}
	if envReference().MatchString(v) { // $TOKEN, %TOKEN%
		return true
	}
	if first, _ := utf8.DecodeRuneInString(v); strings.Trim(v, string(first)) == "" { // ***, 0000
		return true
	}
	if !words {
		return false
	}
	l := strings.ToLower(v)
	for _, w := range placeholderWords {
		if strings.Contains(l, w) {
			return true
		}
	}
	return placeholderValues[l]
}

var (
	uuidValue = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	})
	// A commit hash is not a secret; git's sha1 hashes are 40 hex digits.
	commitValue = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-fA-F]{40}$`) })
	// A segment made of letters then digits ("oauth2", "Credential") reads as a word.
	wordSegment = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:[A-Za-z]+[0-9]*|[0-9]+)$`) })
)

// genericSecret is the generic rule's judgement: a secret-sounding key and a value that looks
// generated. Entropy is checked by the caller.
func genericSecret(key, v string) bool {
	if !secretKey(key) || utf8.RuneCountInString(v) < 16 {
		return false
	}
	switch {
	case strings.HasPrefix(v, "-"), // a flag
		strings.Contains(v, "://"), // a URL: url-credentials judges it
		// A path; one of words only ("/run/secrets/db") is identifierLike, and base64 may
		// start with "/" but holds no ".".
		strings.HasPrefix(v, "~/"), strings.HasPrefix(v, "./"), strings.HasPrefix(v, "../"),
		strings.ContainsAny(v, `/\`) && strings.Contains(v, "."),
		strings.ContainsAny(v, "()[]{},;*"), // code: a call, an index, a literal, a product
		uuidValue().MatchString(v), commitValue().MatchString(v):
		return false
	}
	// Generated secrets mix letters and digits; words and identifiers rarely do.
	if !strings.ContainsAny(v, "0123456789") || strings.IndexFunc(v, unicode.IsLetter) < 0 {
		return false
	}
	return !identifierLike(v)
}

// identifierLike reports whether every part of v between separators reads as words, like
// "oauth2-client-credentials" or "testRSA2048PrivateKey". Random text does not: it breaks
// into one-letter pieces and many digit runs.
func identifierLike(v string) bool {
	for _, seg := range strings.FieldsFunc(v, func(r rune) bool { return strings.ContainsRune("-_.:/", r) }) {
		if !wordSegment().MatchString(seg) && !camelWords(seg) {
			return false
		}
	}
	return true
}

// camelWords reports whether seg splits (at case changes and digit runs) into words of two
// letters or more, with at most two runs of digits.
func camelWords(seg string) bool {
	isDigit := func(c byte) bool { return '0' <= c && c <= '9' }
	isLower := func(c byte) bool { return 'a' <= c && c <= 'z' }
	isUpper := func(c byte) bool { return 'A' <= c && c <= 'Z' }
	digitRuns := 0
	start := 0
	for i := 0; i <= len(seg); i++ {
		if i < len(seg) {
			c := seg[i]
			if !isDigit(c) && !isLower(c) && !isUpper(c) {
				return false
			}
			if i == 0 {
				continue
			}
			p := seg[i-1]
			next := byte(0)
			if i+1 < len(seg) {
				next = seg[i+1]
			}
			if isDigit(p) == isDigit(c) && !(isLower(p) && isUpper(c)) && !(isUpper(p) && isUpper(c) && isLower(next)) {
				continue
			}
		}
		// seg[start:i] is a piece.
		if isDigit(seg[start]) {
			digitRuns++
		} else if i-start < 2 {
			return false
		}
		start = i
	}
	return digitRuns <= 2
}

var (
	secretWords = map[string]bool{
		"keys": true, "tokens": true, "secrets": true, "passwords": true, "pwd": true, "pass": true,
		"passphrase": true, "auth": true, "authorization": true, "creds": true, "private": true,
		"privkey": true,
	}
	// Words that end so are secret words too, and so are compounds written as one word:
	// APIKEY, authtoken, clientsecret, dbpassword.
	secretSuffixes = []string{"key", "token", "secret", "password", "passwd", "credential", "credentials"}
)

// secretKey reports whether a key name suggests that its value is a secret: one of its words
// (split at punctuation and camelCase) is a secret word or ends with one.
func secretKey(key string) bool {
	for _, w := range splitKeyWords(key) {
		w = strings.ToLower(w)
		if secretWords[w] {
			return true
		}
		for _, s := range secretSuffixes {
			if strings.HasSuffix(w, s) {
				return true
			}
		}
	}
	return false
}

// splitKeyWords splits "clientSecret" and "AWS_SESSION_TOKEN" into words.
func splitKeyWords(key string) []string {
	var words []string
	start := -1
	var prev rune
	for i, r := range key {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case !alnum:
			if start >= 0 {
				words = append(words, key[start:i])
			}
			start = -1
		case start < 0:
			start = i
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			words = append(words, key[start:i])
			start = i
		}
		prev = r
	}
	if start >= 0 {
		words = append(words, key[start:])
	}
	return words
}

// passwordKey reports whether key names a password, a secret, a token or an API key itself
// (password, DB_PASSWORD, clientSecret, access_token, api_key), not something about one
// (token_budget, secret_ref, api_key_id, max_tokens).
func passwordKey(key string) bool {
	words := splitKeyWords(key)
	if len(words) == 0 {
		return false
	}
	last := strings.ToLower(words[len(words)-1])
	prev := ""
	if len(words) > 1 {
		prev = strings.ToLower(words[len(words)-2])
	}
	switch last {
	case "pwd", "pass", "passphrase", "apikey", "secretkey", "accesskey":
		return true
	case "key":
		return prev == "api" || prev == "secret" || prev == "access"
	}
	for _, s := range []string{"password", "passwd", "secret", "token"} {
		if strings.HasSuffix(last, s) {
			return true
		}
	}
	return false
}

// passwordAssignments finds the values assigned to password keys where the text reads as
// an assignment, not as prose about one: KEY=VALUE with nothing around the =, a quoted
// value, or a value that ends its line (trailing punctuation and a # or // comment aside).
func passwordAssignments(src []byte) []secretMatch {
	var out []secretMatch
	for _, m := range secretAssignments(src, passwordKey) {
		tight := src[m.sep] == '=' || m.sep+1 < len(src) && (src[m.sep+1] == '=' || src[m.sep+1] == '>')
		if tight {
			k := m.sep + 1
			if k < len(src) && (src[k] == '=' || src[k] == '>') {
				k++
			}
			before := src[m.sep-1]
			tight = k == m.s && before != ' ' && before != '\t'
		}
		quoted := m.s > 0 && m.e < len(src) && strings.IndexByte("\"'`", src[m.s-1]) >= 0 && src[m.e] == src[m.s-1]
		// A value that closes a code span (`password = …`) is a whole assignment too.
		if tight || quoted || endsLine(src[m.e:]) || m.e < len(src) && src[m.e] == '`' {
			out = append(out, m)
		}
	}
	return out
}

// endsLine reports whether rest, what follows a value, holds nothing more on its line than
// closing punctuation and a comment.
func endsLine(rest []byte) bool {
	i := 0
	for i < len(rest) && strings.IndexByte("\"'`*.,;:)]} \t\r", rest[i]) >= 0 {
		i++
	}
	if i == len(rest) || rest[i] == '\n' {
		return true
	}
	return i > 0 && (rest[i-1] == ' ' || rest[i-1] == '\t') && (rest[i] == '#' || bytes.HasPrefix(rest[i:], []byte("//")))
}

var (
	// A dotted name (config.password, os.environ) refers to a value held elsewhere.
	dottedName = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$`)
	})
	// Words that stand for "no value here" in configuration and notes.
	emptyWords = map[string]bool{"none": true, "null": true, "nil": true, "true": true, "false": true,
		"undefined": true, "required": true, "optional": true, "hidden": true, "masked": true, "unset": true,
		"empty": true, "todo": true, "tbd": true, "n/a": true, "sample": true, "default": true, "fake": true}
)

// literalPassword is the generic-password rule's judgement on a value assigned to a password
// key: a literal that looks like a credential, not a placeholder, a reference to one, code, a
// path, a number or a plain word.
func literalPassword(key, v string) bool {
	if !passwordKey(key) || utf8.RuneCountInString(v) < 6 {
		return false
	}
	l := strings.ToLower(v)
	if strings.Contains(l, "xxx") || emptyWords[l] {
		return false
	}
	switch {
	case strings.HasPrefix(v, "-"), // a flag
		strings.Contains(v, "://"), // a URL: url-credentials judges it
		strings.HasPrefix(v, "/"), strings.HasPrefix(v, "~/"), strings.HasPrefix(v, "./"), strings.HasPrefix(v, "../"),
		strings.ContainsAny(v, `/\`) && strings.Contains(v, "."), // a path
		strings.ContainsAny(v, "()[]{}"),                         // code: a call, an index, a literal
		dottedName().MatchString(v),
		uuidValue().MatchString(v), commitValue().MatchString(v):
		return false
	}
	hasDigit := strings.ContainsAny(v, "0123456789")
	if strings.IndexFunc(v, unicode.IsLetter) < 0 {
		// Only a password may be all digits (a PIN); a token: 128000 is a count.
		w := splitKeyWords(key)
		last := strings.ToLower(w[len(w)-1])
		return hasDigit && (strings.HasSuffix(last, "password") || strings.HasSuffix(last, "passwd") || last == "pwd" || last == "pass")
	}
	// Words and identifiers (expired, not-set, userPassword) are prose or code; a credential
	// mixes in digits or symbols, or changes case inside a word.
	if hasDigit || strings.ContainsFunc(v, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_' }) {
		return true
	}
	return !plainWords(v) && !camelWords(v)
}

// plainWords reports whether v is words of letters joined by - or _, each all lower case,
// all upper case or capitalized.
func plainWords(v string) bool {
	for _, w := range strings.FieldsFunc(v, func(r rune) bool { return r == '-' || r == '_' }) {
		rest := strings.TrimLeftFunc(w[:1], unicode.IsUpper) + w[1:]
		if strings.ToLower(rest) != rest && strings.ToUpper(w) != w {
			return false
		}
	}
	return true
}
