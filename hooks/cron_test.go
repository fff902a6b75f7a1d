package hooks

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCronSchedule(t *testing.T) {
	tests := []struct {
		every time.Duration
		want  string // "" for an error
	}{
		{time.Minute, "*/1 * * * *"},
		{5 * time.Minute, "*/5 * * * *"},
		{15 * time.Minute, "*/15 * * * *"},
		{30 * time.Minute, "*/30 * * * *"},
		{60 * time.Minute, "0 * * * *"},
		{time.Hour, "0 * * * *"},
		{2 * time.Hour, "0 */2 * * *"},
		{12 * time.Hour, "0 */12 * * *"},
		{24 * time.Hour, "0 0 * * *"},
		{0, ""},
		{-time.Minute, ""},
		{90 * time.Second, ""},
		{7 * time.Minute, ""},
		{45 * time.Minute, ""},
		{90 * time.Minute, ""},
		{5 * time.Hour, ""},
		{48 * time.Hour, ""},
	}
	for _, tc := range tests {
		t.Run(tc.every.String(), func(t *testing.T) {
			got, err := CronSchedule(tc.every)
			if tc.want == "" {
				if !errors.Is(err, ErrInterval) || !strings.Contains(err.Error(), "15m") {
					t.Errorf("CronSchedule(%s) = %q, %v; want ErrInterval saying what is accepted", tc.every, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("CronSchedule(%s) = %q, %v; want %q", tc.every, got, err, tc.want)
			}
		})
	}
}

// runCronCommand runs a crontab line's command the way cron does: fields stripped, "\%"
// unescaped, a bare "%" ending the command (the rest would be its stdin), then sh.
func runCronCommand(t *testing.T, line string) {
	t.Helper()
	fields := strings.SplitN(line, " ", 6)
	var b strings.Builder
	for i := 0; i < len(fields[5]); i++ {
		c := fields[5][i]
		if c == '\\' && i+1 < len(fields[5]) && fields[5][i+1] == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		if c == '%' {
			break
		}
		b.WriteByte(c)
	}
	cmd := b.String()
	out, err := exec.Command("sh", "-c", cmd).CombinedOutput()
	if err != nil {
		t.Fatalf("sh -c %q: %v\n%s", cmd, err, out)
	}
}

func TestCronLineQuoting(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("sh is not installed")
	}
	tests := []struct{ name, dir string }{
		{"plain", "store"},
		{"space and quote", "my store's \"x\""},
		{"shell and cron specials", "a$b`c`;d%e#f&g*"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			home := filepath.Join(base, tc.dir, "home")
			out := filepath.Join(base, "out")
			bin := filepath.Join(base, tc.dir, "bin dir", "ckpt")
			write(t, bin, "#!/bin/sh\nprintf '%s|%s\\n' \"$CKPT_HOME\" \"$*\" >'"+out+"'\n", 0o755)
			line, err := CronLine(15*time.Minute, bin, home+"/")
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(line, "\n") || !strings.HasPrefix(line, "*/15 * * * * ") {
				t.Fatalf("line %q", line)
			}
			if m := cronLineMarker(line); m == "" || m != cronMarkerFor(home) {
				t.Errorf("marker %q, want %q", m, cronMarkerFor(home))
			}
			runCronCommand(t, line)
			if got := string(readFile(t, out)); got != home+"|cron tick\n" {
				t.Errorf("ckpt saw %q, want %q", got, home+"|cron tick\n")
			}
		})
	}
	t.Run("relative paths are refused", func(t *testing.T) {
		if _, err := CronLine(time.Hour, "ckpt", "/h"); err == nil {
			t.Error("relative ckpt accepted")
		}
		if _, err := CronLine(time.Hour, "/bin/ckpt", "h"); err == nil {
			t.Error("relative home accepted")
		}
		if _, err := CronLine(time.Hour, "/bin/ckpt", "/h\n* * * * * rm -rf ~"); err == nil {
			t.Error("newline in home accepted")
		}
	})
}

type fakeCrontab struct {
	content string
	writes  int
	readErr error
}

func (f *fakeCrontab) Read() (string, error) { return f.content, f.readErr }
func (f *fakeCrontab) Write(s string) error  { f.content = s; f.writes++; return nil }

func TestInstallCron(t *testing.T) {
	line := func(every time.Duration, home string) string {
		l, err := CronLine(every, "/usr/local/bin/ckpt", home)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	a15, a5, b15 := line(15*time.Minute, "/h/a"), line(5*time.Minute, "/h/a"), line(15*time.Minute, "/h/b")
	const others = "# my jobs\nMAILTO=\"\"\n0 3 * * * /usr/bin/backup  --all\t# nightly\n\n@reboot ~/start.sh"
	tests := []struct {
		name, before, line, want string
		changed                  bool
	}{
		{"empty crontab", "", a15, a15 + "\n", true},
		{"others kept, missing newline added", others, a15, others + "\n" + a15 + "\n", true},
		{"already there", others + "\n" + a15 + "\n", a15, others + "\n" + a15 + "\n", false},
		{"new interval replaces in place", "x\n" + a15 + "\ny\n", a5, "x\n" + a5 + "\ny\n", true},
		{"another store gets its own line", a15 + "\n", b15, a15 + "\n" + b15 + "\n", true},
		{"duplicates of the store collapse", a15 + "\nz\n" + a5 + "\n", a5, a5 + "\nz\n", true},
		{"hand-edited schedule is still ckpt's line", strings.Replace(a15, "*/15", "*/20", 1) + "\n", a15, a15 + "\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &fakeCrontab{content: tc.before}
			changed, err := InstallCron(c, tc.line)
			if err != nil {
				t.Fatal(err)
			}
			if changed != tc.changed || c.content != tc.want {
				t.Errorf("InstallCron = %v:\n%q\nwant %v:\n%q", changed, c.content, tc.changed, tc.want)
			}
			if !changed && c.writes != 0 {
				t.Errorf("unchanged crontab written %d times", c.writes)
			}
		})
	}
	t.Run("a line not made by CronLine is refused", func(t *testing.T) {
		c := &fakeCrontab{content: others}
		if _, err := InstallCron(c, "* * * * * ckpt cron tick"); err == nil || c.writes != 0 {
			t.Errorf("err = %v, writes = %d", err, c.writes)
		}
	})
	t.Run("read error writes nothing", func(t *testing.T) {
		c := &fakeCrontab{readErr: errors.New("crontab -l: permission denied")}
		if _, err := InstallCron(c, a15); err == nil || c.writes != 0 {
			t.Errorf("err = %v, writes = %d", err, c.writes)
		}
	})
}

func TestUninstallCron(t *testing.T) {
	a, _ := CronLine(15*time.Minute, "/usr/local/bin/ckpt", "/h/a")
	b, _ := CronLine(time.Hour, "/usr/local/bin/ckpt", "/h/b")
	const others = "# my jobs\n0 3 * * * /usr/bin/backup\n"
	tests := []struct {
		name, before, home, want string
		changed                  bool
	}{
		{"only ckpt's line of that store goes", others + a + "\n" + b + "\n", "/h/a", others + b + "\n", true},
		{"trailing slash names the same store", a + "\n" + others, "/h/a/", others, true},
		{"not installed", others + b + "\n", "/h/a", others + b + "\n", false},
		{"empty", "", "/h/a", "", false},
		{"last line without newline", others + a, "/h/a", others, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &fakeCrontab{content: tc.before}
			line, ok, err := CronInstalled(c, tc.home)
			if err != nil || ok != tc.changed || (ok && line != a) {
				t.Errorf("CronInstalled = %q, %v, %v", line, ok, err)
			}
			changed, err := UninstallCron(c, tc.home)
			if err != nil || changed != tc.changed || c.content != tc.want {
				t.Errorf("UninstallCron = %v, %v:\n%q\nwant %v:\n%q", changed, err, c.content, tc.changed, tc.want)
			}
			if !changed && c.writes != 0 {
				t.Errorf("unchanged crontab written")
			}
		})
	}
}

// TestSystemCrontab drives the real crontab(1) protocol against a fake crontab program
// first on PATH.
func TestSystemCrontab(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("sh is not installed")
	}
	bin := t.TempDir()
	store := filepath.Join(t.TempDir(), "crontab")
	write(t, filepath.Join(bin, "crontab"), `#!/bin/sh
case "$1" in
-l)
	if [ -n "$FAIL" ]; then echo "crontab: cannot connect to cron" >&2; exit 2; fi
	[ -f "$STORE" ] || { echo "no crontab for tester" >&2; exit 1; }
	cat "$STORE" ;;
-) cat >"$STORE" ;;
*) echo "usage" >&2; exit 1 ;;
esac
`, 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("STORE", store)
	t.Setenv("FAIL", "")
	c := SystemCrontab("")

	if got, err := c.Read(); err != nil || got != "" {
		t.Fatalf("Read of no crontab = %q, %v; want empty", got, err)
	}
	line, err := CronLine(30*time.Minute, "/opt/ckpt", "/home/u/.ckpt")
	if err != nil {
		t.Fatal(err)
	}
	write(t, store, "0 3 * * * backup\n", 0o644)
	if changed, err := InstallCron(c, line); err != nil || !changed {
		t.Fatalf("InstallCron = %v, %v", changed, err)
	}
	if got := string(readFile(t, store)); got != "0 3 * * * backup\n"+line+"\n" {
		t.Errorf("crontab = %q", got)
	}
	if got, ok, err := CronInstalled(c, "/home/u/.ckpt"); err != nil || !ok || got != line {
		t.Errorf("CronInstalled = %q, %v, %v", got, ok, err)
	}
	if changed, err := UninstallCron(c, "/home/u/.ckpt"); err != nil || !changed {
		t.Fatalf("UninstallCron = %v, %v", changed, err)
	}
	if got := string(readFile(t, store)); got != "0 3 * * * backup\n" {
		t.Errorf("crontab after uninstall = %q", got)
	}

	t.Setenv("FAIL", "1")
	if _, err := c.Read(); err == nil || !strings.Contains(err.Error(), "cannot connect to cron") {
		t.Errorf("Read with a failing crontab: %v", err)
	}
}

func TestSystemdUnits(t *testing.T) {
	service, timer, err := SystemdUnits(15*time.Minute, "/opt/my ckpt/ckpt", "/home/u/100%/.ckpt")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Type=oneshot\n",
		`Environment="CKPT_HOME=/home/u/100%%/.ckpt"` + "\n",
		`ExecStart="/opt/my ckpt/ckpt" cron tick` + "\n",
	} {
		if !strings.Contains(service, want) {
			t.Errorf("service lacks %q:\n%s", want, service)
		}
	}
	for _, want := range []string{"OnUnitActiveSec=15min\n", "OnStartupSec=15min\n", "WantedBy=timers.target\n"} {
		if !strings.Contains(timer, want) {
			t.Errorf("timer lacks %q:\n%s", want, timer)
		}
	}
	if _, _, err := SystemdUnits(7*time.Minute, "/opt/ckpt", "/h"); !errors.Is(err, ErrInterval) {
		t.Errorf("7m: err = %v", err)
	}
	if _, _, err := SystemdUnits(time.Hour, "ckpt", "/h"); err == nil {
		t.Errorf("relative ckpt accepted")
	}
	// systemd-analyze, when there, checks the units for real.
	if _, err := exec.LookPath("systemd-analyze"); err == nil {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "ckpt-tick.service"), strings.Replace(service, "/opt/my ckpt/ckpt", "/bin/true", 1), 0o644)
		write(t, filepath.Join(dir, "ckpt-tick.timer"), timer, 0o644)
		out, err := exec.Command("systemd-analyze", "verify", "--man=no", filepath.Join(dir, "ckpt-tick.timer"), filepath.Join(dir, "ckpt-tick.service")).CombinedOutput()
		if err != nil || strings.Contains(string(out), "Unknown") {
			t.Errorf("systemd-analyze verify: %v\n%s", err, out)
		}
	}
}
