package secrets

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ckpt-dev/ckpt/internal/benchhistory"
	"github.com/ckpt-dev/ckpt/sections"
)

const (
	upperChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lowerChars = "abcdefghijklmnopqrstuvwxyz"
	digitChars = "0123456789"
	alnumChars = upperChars + lowerChars + digitChars
)

// fakeSecrets builds token-shaped values at run time, from pieces and a seeded generator, so
// that the repository holds no string that secret scanners or push protection would flag.
func fakeSecrets() map[string]string {
	rng := rand.New(rand.NewPCG(2026, 4))
	pick := func(n int, alphabet string) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	b64url := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	pem := func(kind, nl string) string {
		body := ""
		for range 4 {
			body += pick(64, alnumChars+"+/") + nl
		}
		body += pick(30, alnumChars+"+/") + "==" + nl
		return "-----BEGIN " + kind + " KEY-----" + nl + body + "-----END " + kind + " KEY-----"
	}
	f := map[string]string{}
	f["AWS_ACCESS_KEY_ID"] = "AK" + "IA" + pick(16, upperChars+digitChars)
	f["AWS_SECRET"] = pick(40, alnumChars+"/+")
	f["GITHUB_TOKEN"] = "gh" + "p_" + pick(36, alnumChars)
	f["GITHUB_PAT"] = "github" + "_pat_" + pick(22, alnumChars) + "_" + pick(59, alnumChars)
	f["GITLAB_TOKEN"] = "gl" + "pat-" + pick(20, alnumChars+"_-")
	f["SLACK_TOKEN"] = "xo" + "xb-" + pick(12, digitChars) + "-" + pick(13, digitChars) + "-" + pick(24, alnumChars)
	f["SLACK_WEBHOOK"] = "https://hooks.slack" + ".com/services/T" + pick(8, upperChars+digitChars) +
		"/B" + pick(10, upperChars+digitChars) + "/" + pick(24, alnumChars)
	f["STRIPE_KEY"] = "sk" + "_live_" + pick(24, alnumChars)
	f["GOOGLE_API_KEY"] = "AI" + "za" + pick(35, alnumChars+"_-")
	f["OPENAI_KEY"] = "sk-" + "proj-" + pick(48, alnumChars+"_-")
	f["OPENAI_LEGACY_KEY"] = "sk-" + pick(48, alnumChars)
	f["ANTHROPIC_KEY"] = "sk-" + "ant-api03-" + pick(93, alnumChars+"_-") + "AA"
	f["HF_TOKEN"] = "hf" + "_" + pick(34, upperChars+lowerChars)
	f["NPM_TOKEN"] = "np" + "m_" + pick(36, alnumChars)
	f["PEM_INLINE"] = pem("PRIVATE", `\n`)
	f["PEM_BLOCK"] = pem("OPENSSH PRIVATE", "\n")
	f["JWT"] = b64url(`{"alg":"HS256","typ":"JWT"}`) + "." + b64url(`{"sub":"release-bot","exp":1775080800}`) +
		"." + pick(43, alnumChars+"_-")
	f["DB_PASSWORD"] = pick(18, alnumChars)
	f["GENERIC_SECRET"] = pick(32, alnumChars)
	f["HEX_SECRET"] = pick(64, digitChars+"abcdef")
	f["WEAK_PASSWORD"] = "hunt" + "er2"

	// Near misses for the clean file.
	f["GITHUB_X_TOKEN"] = "gh" + "p_" + strings.Repeat("x", 36)
	f["OPENAI_X_KEY"] = "sk-" + strings.Repeat("x", 48)
	f["AWS_EXAMPLE_KEY"] = "AK" + "IAIOSFODNN7" + "EXAMPLE"
	f["SLACK_EXAMPLE_WEBHOOK"] = "https://hooks.slack" + ".com/services/T00000000/B00000000/" + strings.Repeat("X", 24)
	f["PEM_MARKER"] = "-----BEGIN OPENSSH " + "PRIVATE KEY-----"
	return f
}

// fill reads testdata/secrets/name and replaces its {{NAME}} placeholders.
func fill(t testing.TB, name string, f map[string]string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "secrets", name))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for k, v := range f {
		s = strings.ReplaceAll(s, "{{"+k+"}}", v)
	}
	if i := strings.Index(s, "{{"); i >= 0 {
		t.Fatalf("%s: placeholder left unfilled: %.40s", name, s[i:])
	}
	return []byte(s)
}

func secretStrings(ss []Finding) []string {
	out := []string{}
	for _, s := range ss {
		out = append(out, s.Rule+" "+s.Value)
	}
	return out
}

func TestScanSecretsCorpus(t *testing.T) {
	f := fakeSecrets()
	src := fill(t, "checkpoint.md", f)
	want := []struct {
		name, rule string
		line       int
		section    sections.ID
	}{
		{"AWS_ACCESS_KEY_ID", "aws-access-key-id", 3, ""},
		{"NPM_TOKEN", "npm-token", 7, "§1"},
		{"GITHUB_TOKEN", "github-token", 7, "§1"},
		{"GITHUB_PAT", "github-fine-grained-pat", 11, "§2"},
		{"SLACK_WEBHOOK", "slack-webhook", 16, "§3"},
		{"GITLAB_TOKEN", "gitlab-token", 21, "§4"},
		{"SLACK_TOKEN", "slack-token", 22, "§4"},
		{"STRIPE_KEY", "stripe-live-key", 26, "§5"},
		{"GOOGLE_API_KEY", "google-api-key", 26, "§5"},
		{"OPENAI_KEY", "openai-api-key", 33, "§6"},
		{"ANTHROPIC_KEY", "anthropic-api-key", 34, "§6"},
		{"HF_TOKEN", "huggingface-token", 35, "§6"},
		{"AWS_SECRET", "aws-secret-access-key", 38, "§6"},
		{"PEM_INLINE", "private-key", 39, "§6"},
		{"JWT", "jwt", 43, "§7"},
		{"DB_PASSWORD", "url-credentials", 47, "§8"},
		{"OPENAI_LEGACY_KEY", "openai-api-key", 48, "§8"},
		{"GENERIC_SECRET", "generic-secret", 53, "§9"},
		{"PEM_BLOCK", "private-key", 64, "§11"},
		{"WEAK_PASSWORD", "generic-password", 72, "§11"},
	}
	got := Scan(src, 2, nil)
	for i, w := range want {
		if i >= len(got) {
			t.Errorf("missing %s (%s) at line %d", w.name, w.rule, w.line)
			continue
		}
		g := got[i]
		if g.Rule != w.rule || g.Line != w.line || g.Section != w.section || g.Value != f[w.name] {
			t.Errorf("finding %d = %s at %d in %q (%s), want %s at %d in %q (%s)",
				i, g.Rule, g.Line, g.Section, g.Redacted, w.rule, w.line, w.section, redactSecret(f[w.name]))
		}
	}
	for _, g := range got[min(len(got), len(want)):] {
		t.Errorf("unexpected %s at line %d: %s", g.Rule, g.Line, g.Redacted)
	}

	// Every rule has a case here: a rule the corpus does not exercise is untested.
	covered := map[string]bool{}
	for _, w := range want {
		covered[w.rule] = true
	}
	for _, r := range Rules() {
		if !covered[r.ID] {
			t.Errorf("rule %s has no case in testdata/secrets/checkpoint.md", r.ID)
		}
	}
}

func TestScanSecretsLines(t *testing.T) {
	f := fakeSecrets()
	gh, npm := f["GITHUB_TOKEN"], f["NPM_TOKEN"]
	pemKind := "RSA " + "PRIVATE"
	encrypted := "-----BEGIN " + pemKind + " KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F2A9C\n\n" +
		strings.Repeat(f["AWS_SECRET"], 2) + "\n-----END " + pemKind + " KEY-----"
	unterminated := "-----BEGIN " + pemKind + " KEY-----\n" + f["AWS_SECRET"]
	xoxp := "xo" + "xp-" + "2718281828-3141592653-1618033988-" + "9f2c" + f["GENERIC_SECRET"][:28]
	weak := f["WEAK_PASSWORD"]
	tcs := []struct {
		name string
		src  string
		want []string // "rule value", in order
	}{
		// Caught.
		{"github oauth token", "token gh" + "o_" + gh[4:], []string{"github-token gh" + "o_" + gh[4:]}},
		{"github server token", "GH_APP=gh" + "s_" + gh[4:], []string{"github-token gh" + "s_" + gh[4:]}},
		{"github user and refresh tokens", "u=gh" + "u_" + gh[4:] + " r=gh" + "r_" + gh[4:],
			[]string{"github-token gh" + "u_" + gh[4:], "github-token gh" + "r_" + gh[4:]}},
		{"aws temporary key id", "key ASIA" + f["AWS_ACCESS_KEY_ID"][4:], []string{"aws-access-key-id ASIA" + f["AWS_ACCESS_KEY_ID"][4:]}},
		{"aws secret in json", `"SecretAccessKey": "` + f["AWS_SECRET"] + `"`, []string{"aws-secret-access-key " + f["AWS_SECRET"]}},
		{"stripe restricted key", "rk" + "_live_" + f["STRIPE_KEY"][8:], []string{"stripe-live-key rk" + "_live_" + f["STRIPE_KEY"][8:]}},
		{"slack user token", "SLACK=" + xoxp, []string{"slack-token " + xoxp}},
		{"encrypted pem", encrypted, []string{"private-key " + encrypted}},
		{"pem without end before the next block", unterminated + "\n" + encrypted,
			[]string{"private-key " + unterminated, "private-key " + encrypted}},
		{"password in a clone url", "git clone https://ci-bot:" + f["DB_PASSWORD"] + "@gitlab.example.com/g/r.git",
			[]string{"url-credentials " + f["DB_PASSWORD"]}},
		{"short password in a dsn", "postgres://app:" + "s3cr3t@db:5432/app", []string{"url-credentials s3cr3t"}},
		{"yaml client secret", `client_secret: "` + f["GENERIC_SECRET"] + `"`, []string{"generic-secret " + f["GENERIC_SECRET"]}},
		{"json apiKey", `{"apiKey": "` + f["GENERIC_SECRET"] + `"}`, []string{"generic-secret " + f["GENERIC_SECRET"]}},
		{"bold markdown key", "**Signing secret**: `" + f["GENERIC_SECRET"] + "`.", []string{"generic-secret " + f["GENERIC_SECRET"]}},
		{"bearer scheme", "Authorization: Bearer " + f["GENERIC_SECRET"], []string{"generic-secret " + f["GENERIC_SECRET"]}},
		{"camelCase key", "authCode=" + f["GENERIC_SECRET"], []string{"generic-secret " + f["GENERIC_SECRET"]}},
		{"nested assignment is one value", "auth: token=" + f["GENERIC_SECRET"], []string{"generic-secret token=" + f["GENERIC_SECRET"]}},
		{"long base64 value", "GOOGLE_CREDENTIALS=" + strings.Repeat(f["AWS_SECRET"], 30),
			[]string{"generic-secret " + strings.Repeat(f["AWS_SECRET"], 30)}},
		{"generic with sentence end", "set SIGNING_KEY=" + f["GENERIC_SECRET"] + ".", []string{"generic-secret " + f["GENERIC_SECRET"]}},
		{"hex secret", "SECRET_KEY_BASE=" + f["HEX_SECRET"], []string{"generic-secret " + f["HEX_SECRET"]}},
		{"base64 starting with a slash", "API_SECRET=/" + f["GENERIC_SECRET"], []string{"generic-secret /" + f["GENERIC_SECRET"]}},
		{"same token twice on a line", gh + " and again " + gh, []string{"github-token " + gh}},
		{"two tokens on a line", gh + " " + npm, []string{"github-token " + gh, "npm-token " + npm}},
		{"token as url password is one finding", "https://x-access-token:" + gh + "@github.com/o/r.git", []string{"github-token " + gh}},
		{"token in key=value is one finding", "GITHUB_TOKEN=" + gh, []string{"github-token " + gh}},
		{"weak password", "password = " + weak, []string{"generic-password " + weak}},
		{"weak password in yaml", "  db_password: " + weak + "  # dev only", []string{"generic-password " + weak}},
		{"secret in yaml", "secret: " + weak + "!", []string{"generic-password " + weak + "!"}},
		{"api_key tight", "api_key=" + weak + " and then some prose", []string{"generic-password " + weak}},
		{"token quoted in json", `{"token": "` + weak + `", "user": "bob"}`, []string{"generic-password " + weak}},
		{"bold markdown password", "- **Password**: `" + weak + "`", []string{"generic-password " + weak}},
		{"password in prose line end", "the admin password: " + weak + ".", []string{"generic-password " + weak}},
		{"nested password assignment", "auth: token=" + weak, []string{"generic-password " + weak}},
		{"mixed case without digits", "PASSWORD=" + "cOrRe" + "ctHoRsE", []string{"generic-password " + "cOrRe" + "ctHoRsE"}},
		{"numeric pin", "pass" + "word: " + "246" + "810", []string{"generic-password " + "246" + "810"}},
		{"low entropy", "PASSWORD=" + "aaaaaaaa" + "bbbbbbbb1", []string{"generic-password " + "aaaaaaaa" + "bbbbbbbb1"}},
		{"short api key", "API_KEY=" + "abc" + "123", []string{"generic-password " + "abc" + "123"}},

		// Not secrets.
		{"dsn without password", "MC_DB_DSN=postgres://mc_ro@host:5433/exp_2026", nil},
		{"ssh remote", "git@github.com:ckpt-dev/ckpt.git and ssh://git@host:22/r.git", nil},
		{"url with port", "https://example.com:8443/path@v2", nil},
		{"commit hash", "TOKEN_COMMIT=" + "3f2c9a1e8b7d6c5f4a3b2c1d0e9f8a7b6c5d4e3f", nil},
		{"uuid", "api_key_id: " + "7c9e6679-7425-40de-944b-e07fc1f90ae7", nil},
		{"random value under a plain key", "BUILD_ID=" + f["GENERIC_SECRET"], nil},
		{"path", "PRIVATE_KEY=/home/ci/.ssh/id_ed25519_2026", nil},
		{"path of words", "token_file: /run/secrets/deploy_token2", nil},
		{"relative path", "auth_file: secrets/deploy-2026/token.json", nil},
		{"flag", "AUTH_ARGS=--token-file=/run/secrets/t0ken", nil},
		{"identifier", "auth_provider: oauth2-client-credentials-v2", nil},
		{"camelCase identifier", "private: testRSA2048PrivateKey and KEY=ed25519lib.PublicKeySize", nil},
		{"code", "privKey := x509.PrivateKey[1] and secret = make(map[string]int32) and keys = 2*maxKeysPerShard64", nil},
		{"masked password", "https://user:***@proxy:3128 and https://u:foo@h", nil},
		{"short", "API_KEY=ab12", nil},
		{"empty password", "password = \nsecret:\ntoken: \"\"", nil},
		{"angle password", "password = <db-password>", nil},
		{"stars password", "password: ********", nil},
		{"example password", "secret = example-secret-2026", nil},
		{"password prose", "the password: it was rotated on 2026-04-01 by ops", nil},
		{"token state", "Auth token: expired", nil},
		{"token count", "max_token: 128000 and tokens: 4096", nil},
		{"token budget", "token_budget: 20000", nil},
		{"password variable", "password = userPassword", nil},
		{"password reference", "password = config.db_password", nil},
		{"password call", "token = os.Getenv(\"TOKEN\")", nil},
		{"password from env", "password: $DB_PASSWORD", nil},
		{"password words", "password: not-set-yet", nil},
		{"token path", "token: /run/secrets/deploy-token", nil},
		{"secret ref", "secret_ref: projects/p/secrets/s/versions/3", nil},
		{"api key id", "api_key_id: 12345678", nil},
		{"token type", "token_type: Bearer", nil},
		{"password flag", "password: --from-stdin", nil},
		{"x run password", "password = xxx123xxx", nil},
		{"angle placeholder", "API_KEY=<your-token-goes-here-2026>", nil},
		{"shell placeholder", "GITHUB_TOKEN=${GITHUB_TOKEN}", nil},
		{"env reference password", "postgres://app:$DB_PASSWORD@db/app", nil},
		{"changeme", "password: changeme", nil},
		{"hf placeholder", "HF_TOKEN=hf_xxx", nil},
		{"x run token", "gh" + "p_" + strings.Repeat("x", 36), nil},
		{"x run secret", "SECRET=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx1", nil},
		{"elided token", "OPENAI_API_KEY=" + f["OPENAI_KEY"][:32] + "...", nil},
		{"elided secret", "DEPLOY_SECRET=" + f["GENERIC_SECRET"][:20] + "…", nil},
		{"aws docs example", "AK" + "IAIOSFODNN7" + "EXAMPLE", nil},
		{"pem marker in prose", "the file starts with -----BEGIN OPENSSH " + "PRIVATE KEY----- and then base64", nil},
		{"jwt header alone", "the header eyJhbGciOiJIUzI1NiJ9 says HS256", nil},
		{"slack placeholder", "xoxb-your-bot-token-here", nil},
		{"token inside a longer word", "prefix" + gh + "suffix", nil},
	}
	for _, tc := range tcs {
		t.Run(tc.name, func(t *testing.T) {
			got := secretStrings(Scan([]byte(tc.src), 0, nil))
			want := tc.want
			if want == nil {
				want = []string{}
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("Scan(%q)\ngot  %q\nwant %q", tc.src, got, want)
			}
		})
	}
}

func TestScanSecretsLineNumbers(t *testing.T) {
	gh := fakeSecrets()["GITHUB_TOKEN"]
	for _, tc := range []struct {
		name    string
		src     string
		level   int
		line    int
		section sections.ID
	}{
		{"crlf", "## A\r\ntext\r\n\r\n## B\r\nx " + gh + "\r\n", 0, 5, "b"},
		{"bom and front matter", "\xEF\xBB\xBF---\nk: v\n---\n" + gh + "\n## A\n", 2, 4, ""},
		{"fenced code counts", "## §1 X\n```\n## §2 not a heading\n" + gh + "\n```\n", 2, 4, "§1"},
		{"no final newline", "### 🎯 Current Task\n\n" + gh, 3, 3, "🎯"},
		{"level picks the sections", "## A\n### B\n" + gh + "\n", 2, 3, "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Scan([]byte(tc.src), tc.level, nil)
			if len(got) != 1 || got[0].Line != tc.line || got[0].Section != tc.section {
				t.Fatalf("got %+v, want one at line %d in %q", got, tc.line, tc.section)
			}
		})
	}
}

func TestScanSecretsAllow(t *testing.T) {
	f := fakeSecrets()
	src := fill(t, "checkpoint.md", f)
	all := secretStrings(Scan(src, 2, nil))
	without := func(rules ...string) []string {
		var out []string
		for _, s := range all {
			rule, _, _ := strings.Cut(s, " ")
			drop := false
			for _, r := range rules {
				drop = drop || r == rule || r == s
			}
			if !drop {
				out = append(out, s)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		allow []string
		want  []string
	}{
		{"exact value", []string{f["GITHUB_TOKEN"]}, without("github-token " + f["GITHUB_TOKEN"])},
		{"url password by value", []string{f["DB_PASSWORD"]}, without("url-credentials " + f["DB_PASSWORD"])},
		{"rule", []string{"rule:private-key"}, without("private-key")},
		{"prefix", []string{"prefix:sk-" + "ant-"}, without("anthropic-api-key")},
		{"broad prefix", []string{"prefix:sk-"}, without("openai-api-key", "anthropic-api-key")},
		{"several", []string{"rule:jwt", "rule:generic-secret", f["HF_TOKEN"]}, without("jwt", "generic-secret", "huggingface-token")},
		{"nothing matches", []string{"", "prefix:", "rule:", "rule:no-such-rule", f["GITHUB_TOKEN"][:20], "prefix:zz"}, all},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := secretStrings(Scan(src, 2, tc.allow))
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("allow %q: got %d findings\n%q\nwant %d\n%q", tc.allow, len(got), got, len(tc.want), tc.want)
			}
		})
	}

	// An allowlisted token does not come back as a generic secret.
	gh := f["GITHUB_TOKEN"]
	for _, allow := range []string{gh, "rule:github-token", "prefix:gh" + "p_"} {
		if got := Scan([]byte("GITHUB_TOKEN="+gh+"\n"), 0, []string{allow}); len(got) != 0 {
			t.Errorf("allow %.16q: got %v", allow, secretStrings(got))
		}
	}
}

func secretCorpus(t testing.TB, name string) []byte {
	t.Helper()
	for _, dir := range []string{filepath.Join("..", "testdata", "corpus"), filepath.Join("..", "..", "shared", "corpus")} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			return b
		}
	}
	t.Skipf("corpus file %s not available", name)
	return nil
}

func TestScanSecretsClean(t *testing.T) {
	for _, name := range []string{"six/checkpoint.md", "six/notes.md", "eleven/checkpoint.md", "eleven/notes.md", "eleven/MEMORY.md"} {
		t.Run(name, func(t *testing.T) {
			if got := Scan(secretCorpus(t, name), 0, nil); len(got) != 0 {
				t.Errorf("false positives: %+v", got)
			}
		})
	}
	// Every file of both corpora: logs, transcripts and task databases hold prose about
	// tokens and passwords too.
	var files []string
	for _, dir := range []string{filepath.Join("..", "testdata", "corpus"), filepath.Join("..", "..", "shared", "corpus")} {
		fs, _ := filepath.Glob(filepath.Join(dir, "*", "*"))
		files = append(files, fs...)
	}
	for _, name := range files {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range Scan(b, 0, nil) {
				t.Errorf("false positive at line %d: %s %q", s.Line, s.Rule, s.Redacted)
			}
		})
	}
	t.Run("testdata/secrets/clean.md", func(t *testing.T) {
		if got := Scan(fill(t, "clean.md", fakeSecrets()), 3, nil); len(got) != 0 {
			for _, s := range got {
				t.Errorf("false positive at line %d: %s %q", s.Line, s.Rule, s.Value)
			}
		}
	})
}

// The repository must not hold token-shaped strings (push protection on the remote would
// reject it), so the fakes are built at run time; this keeps it that way.
func TestSecretSourcesClean(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "secrets", "*"))
	for _, name := range append(files, "secrets.go", "secrets_test.go") {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range Scan(b, 0, nil) {
			t.Errorf("%s:%d: %s %s: build it at run time", name, s.Line, s.Rule, s.Redacted)
		}
	}
}

func TestSecretRedacted(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{"ab", "…"},
		{"abc", "…"},
		{"abcd", "a…d"},
		{"s3cr3t", "s…t"},
		{"abcdefgh", "ab…gh"},
		{"abcdefghijkl", "abc…jkl"},
		{"gh" + "p_0123456789abcdefghijklmnopqrstuv9f2c", "gh" + "p_…9f2c"},
		{"pässwörtchen", "päs…hen"},
	} {
		if got := redactSecret(tc.value); got != tc.want {
			t.Errorf("redactSecret(%q) = %q, want %q", tc.value, got, tc.want)
		}
	}

	for _, s := range Scan(fill(t, "checkpoint.md", fakeSecrets()), 2, nil) {
		if utf8.RuneCountInString(s.Redacted) >= utf8.RuneCountInString(s.Value) || strings.Contains(s.Redacted, s.Value) {
			t.Errorf("%s: redacted %q gives the value away", s.Rule, s.Redacted)
		}
	}
}

func TestSecretCheck(t *testing.T) {
	src := fill(t, "checkpoint.md", fakeSecrets())
	doc := sections.Parse(src, sections.Options{})
	secrets := Scan(src, 0, nil)
	fs := sections.Check(doc, doc, sections.Rules{Extra: []func(*sections.Document) []sections.Finding{Check(nil)}})
	var got []sections.Finding
	for _, f := range fs {
		if strings.HasPrefix(f.Message, "possible secret") {
			got = append(got, f)
		}
	}
	if sections.HasErrors(fs) {
		t.Errorf("errors in %v", fs)
	}
	if len(got) != len(secrets) {
		t.Fatalf("got %d secret findings, want %d", len(got), len(secrets))
	}
	for i, f := range got {
		s := secrets[i]
		want := sections.Finding{Line: s.Line, Severity: sections.Warning, Section: s.Section, Message: "possible secret (" + s.Rule + "): " + s.Redacted}
		if f != want {
			t.Errorf("finding %d = %+v, want %+v", i, f, want)
		}
	}

	// Sections are found by where they are now, not by the line they were parsed at.
	gh := fakeSecrets()["GITHUB_TOKEN"]
	d := sections.Parse([]byte("## §1 A\n_x_\ntext\n## §2 B\nmore\n"), sections.Options{})
	d.Put(sections.Section{ID: "§3", Line: 99, Heading: []byte("## §3 C\n"), Body: []byte("token " + gh + "\n")}, nil)
	want := []sections.Finding{{Line: 7, Severity: sections.Warning, Section: "§3", Message: "possible secret (github-token): " + redactSecret(gh)}}
	if got := Check(nil)(d); fmt.Sprint(got) != fmt.Sprint(want) || got[0].Section != "§3" {
		t.Errorf("after Put: got %+v, want %+v", got, want)
	}
	if got := Check([]string{"rule:github-token"})(d); len(got) != 0 {
		t.Errorf("allowlisted: got %+v", got)
	}
}

func TestSecretRules(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules() {
		if r.ID == "" || r.Description == "" || seen[r.ID] || strings.ContainsAny(r.ID, " :") {
			t.Errorf("rule %q: want a unique id without spaces or colons and a description", r.ID)
		}
		seen[r.ID] = true
	}
	rs := Rules()
	rs[0].ID = "changed"
	if Rules()[0].ID == "changed" {
		t.Error("Rules returns the package's own slice")
	}
}

func FuzzScanSecrets(f *testing.F) {
	fakes := fakeSecrets()
	for _, name := range []string{"checkpoint.md", "clean.md"} {
		f.Add(fill(f, name, fakes), 0)
	}
	f.Add([]byte("## A\r\nk: postgres://u:"+fakes["DB_PASSWORD"]+"@h/x\r\n-----BEGIN PRIVATE"+" KEY-----\r\n"+fakes["AWS_SECRET"]+"\r\n"), 2)
	f.Add([]byte("TOKEN=\xff\xfe"+fakes["GENERIC_SECRET"]+"\n"), 3)
	f.Fuzz(func(t *testing.T, src []byte, level int) {
		lines := bytes.Split(src, []byte{'\n'})
		for _, s := range Scan(src, level%7, nil) {
			if s.Line < 1 || s.Line > len(lines) {
				t.Fatalf("%s at line %d of %d", s.Rule, s.Line, len(lines))
			}
			first, _, _ := strings.Cut(s.Value, "\n")
			if !bytes.Contains(lines[s.Line-1], []byte(first)) {
				t.Fatalf("%s: line %d %q does not hold %q", s.Rule, s.Line, lines[s.Line-1], first)
			}
			if utf8.RuneCountInString(s.Redacted) >= utf8.RuneCountInString(s.Value) {
				t.Fatalf("%s: redacted %q is not shorter than %q", s.Rule, s.Redacted, s.Value)
			}
		}
	})
}

// BenchmarkScanSecrets8KB is the push scan's cost per version of a typical checkpoint: the
// corpus six checkpoint grown to about 8 KB of prose, paths, KEY=VALUE literals and code.
func BenchmarkScanSecrets8KB(b *testing.B) {
	src := secretCorpus(b, "six/checkpoint.md")
	for i := 0; len(src) < 8<<10; i++ {
		src = fmt.Appendf(src, "- item %d: set `MAX_TOKENS=%d` in /srv/app/%d/config.toml, see https://example.com/%d (token: expired)\n", i, i*64, i, i)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if fs := Scan(src, 0, nil); len(fs) != 0 {
			b.Fatal(fs)
		}
	}
}

// FuzzCheck holds Check to findings with valid lines, whatever the document (sections'
// FuzzCheck held its rules to the same before the scanner moved here).
func FuzzCheck(f *testing.F) {
	for _, name := range []string{"six/checkpoint.md", "eleven/checkpoint.md"} {
		f.Add(secretCorpus(f, name))
	}
	f.Add(fill(f, "checkpoint.md", fakeSecrets()))
	f.Fuzz(func(t *testing.T, doc []byte) {
		d := sections.Parse(doc, sections.Options{})
		lines := strings.Count(string(doc), "\n") + 1
		for _, fd := range Check(nil)(d) {
			if fd.Line < 1 || fd.Line > lines+1 {
				t.Fatalf("finding at line %d of a %d-line document: %v", fd.Line, lines, fd)
			}
		}
	})
}

// prefilterInputs are texts for comparing the prefiltered scan with the plain one: the
// filled test files, the corpus, and every fake secret in assignments and prose of several
// shapes (keys in any case, CRLF line breaks, no final line break, a value alone).
func prefilterInputs(t testing.TB) [][]byte {
	fakes := fakeSecrets()
	var out [][]byte
	for _, name := range []string{"checkpoint.md", "clean.md"} {
		out = append(out, fill(t, name, fakes))
	}
	for _, dir := range []string{filepath.Join("..", "testdata", "corpus"), filepath.Join("..", "..", "shared", "corpus")} {
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
				if b, err := os.ReadFile(p); err == nil {
					out = append(out, b)
				}
			}
			return nil
		})
	}
	shapes := []string{
		"%s", "%s\n", "x %s y\n", "KEY=%s", "Api_Key: %s\n", "PASSWORD = \"%s\"\r\n", "authToken=%s # c\n",
		"- clientSecret: `%s`\n", "**Private**: %s.\n", "creds: Bearer %s\n", "pwd=%s\nnext line\n",
		"postgres://user:%s@host/db\n", "## Notes\n\ntext\n\n## Keys\n\nTOKEN: %s\n", "line\r\nsecret_access_key = %s\r\n",
	}
	values := []string{
		// The other prefixes of the token rules.
		"AS" + "IA" + fakes["AWS_ACCESS_KEY_ID"][4:], "gh" + "o_" + fakes["GITHUB_TOKEN"][4:], "gh" + "u_" + fakes["GITHUB_TOKEN"][4:],
		"gh" + "s_" + fakes["GITHUB_TOKEN"][4:], "gh" + "r_" + fakes["GITHUB_TOKEN"][4:], "r" + fakes["STRIPE_KEY"][1:],
		"xo" + "xp-" + fakes["SLACK_TOKEN"][5:], "https://hooks.slack" + ".com/workflows/" + fakes["GENERIC_SECRET"],
	}
	for _, name := range sortedKeys(fakes) {
		values = append(values, fakes[name])
	}
	for _, v := range values {
		for _, sh := range shapes {
			out = append(out, fmt.Appendf(nil, sh, v))
		}
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkPrefilter fails when the prefiltered scan of src differs from running every rule
// over the whole text.
func checkPrefilter(t *testing.T, src []byte, allow []string) {
	t.Helper()
	doc := func() *sections.Document { return sections.Parse(src, sections.Options{}) }
	got, want := scan(src, allow, doc, false), scan(src, allow, doc, true)
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Fatalf("prefiltered scan of %q:\n%+v\nwant (plain scan):\n%+v", src, got, want)
	}
}

// TestPrefilterAgrees: the literal prefilter never hides or adds a finding.
func TestPrefilterAgrees(t *testing.T) {
	// Every word that makes a key secret holds a key word, so the prefilter keeps its line.
	words := append([]string{"apikey", "secretkey", "accesskey"}, secretSuffixes...)
	for w := range secretWords {
		words = append(words, w)
	}
	for _, w := range words {
		if !slices.ContainsFunc(keyWords, func(k string) bool { return strings.Contains(w, k) }) {
			t.Errorf("secret word %q holds none of keyWords", w)
		}
	}
	found := 0
	for _, src := range prefilterInputs(t) {
		checkPrefilter(t, src, nil)
		checkPrefilter(t, bytes.ToUpper(src), nil)
		checkPrefilter(t, src, []string{"rule:generic-secret", "prefix:gh"})
		found += len(scan(src, nil, func() *sections.Document { return sections.Parse(src, sections.Options{}) }, true))
	}
	if found < 100 {
		t.Fatalf("the inputs hold only %d findings: the comparison proves little", found)
	}
}

// FuzzPrefilter holds the prefiltered scan to the plain one on any text.
func FuzzPrefilter(f *testing.F) {
	for _, src := range prefilterInputs(f) {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		checkPrefilter(t, src, nil)
	})
}

// BenchmarkScanSecretsHistory is the push scan's cost per version of the benchmark
// sessions' checkpoints (internal/benchhistory): prose with no secret, as most are.
func BenchmarkScanSecretsHistory(b *testing.B) {
	var srcs [][]byte
	n := 0
	for v := range 20 {
		srcs = append(srcs, benchhistory.Checkpoint(v))
		n += len(srcs[v])
	}
	b.SetBytes(int64(n / len(srcs)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if fs := Scan(srcs[i%len(srcs)], 0, nil); len(fs) != 0 {
			b.Fatal(fs)
		}
		i++
	}
}
