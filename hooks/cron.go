package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// ErrInterval is returned for a tick interval that cron cannot express evenly.
var ErrInterval = errors.New("unsupported interval")

// cronMarker starts the comment that ends ckpt's crontab line; the store's home follows,
// so that several stores can each have their line.
const cronMarker = "# ckpt-cron home="

// CronSchedule turns an interval into the five cron fields. Only intervals that divide
// the hour or the day are accepted, because "*/7" would tick at :56 and again at :00.
func CronSchedule(every time.Duration) (string, error) {
	m := int(every / time.Minute)
	switch {
	case every%time.Minute != 0 || m < 1:
	case m < 60 && 60%m == 0:
		return fmt.Sprintf("*/%d * * * *", m), nil
	case m == 60:
		return "0 * * * *", nil
	case m == 24*60:
		return "0 0 * * *", nil
	case m%60 == 0 && 24%(m/60) == 0:
		return fmt.Sprintf("0 */%d * * *", m/60), nil
	}
	return "", fmt.Errorf("every %s: %w: want minutes dividing an hour (1m, 2m, 3m, 4m, 5m, 6m, 10m, 12m, 15m, 20m, 30m) or hours dividing a day (1h, 2h, 3h, 4h, 6h, 8h, 12h, 24h)", every, ErrInterval)
}

// CronLine returns the crontab line that runs `ckpt cron tick` for the store at home every
// interval. Paths are absolute (cron starts in $HOME with a bare PATH) and quoted for sh;
// the line ends with a marker comment naming the store, so install can replace and
// uninstall can remove exactly this store's line. Output goes away; errors are left to
// cron's mail and the tick's receipts.
func CronLine(every time.Duration, ckptPath, home string) (string, error) {
	sched, err := CronSchedule(every)
	if err != nil {
		return "", err
	}
	if err := checkPath("ckpt", ckptPath); err != nil {
		return "", err
	}
	if err := checkPath("home", home); err != nil {
		return "", err
	}
	home = filepath.Clean(home)
	cmd := "CKPT_HOME=" + shQuote(home) + " " + shQuote(ckptPath) + " cron tick >/dev/null"
	return sched + " " + cronEscape(cmd) + " " + cronMarkerFor(home), nil
}

func checkPath(what, p string) error {
	if !filepath.IsAbs(p) {
		return fmt.Errorf("%s path %q: must be absolute for cron", what, p)
	}
	if strings.ContainsAny(p, "\n\r\x00") {
		return fmt.Errorf("%s path %q: contains a line break", what, p)
	}
	return nil
}

// cronMarkerFor is the comment that identifies the line of the store at home.
func cronMarkerFor(home string) string {
	return cronEscape(cronMarker + shQuote(filepath.Clean(home)))
}

// shQuote quotes s as one sh word.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// cronEscape protects '%', which cron turns into a newline anywhere in the command, even
// inside quotes and comments; cron removes the backslash again.
func cronEscape(s string) string { return strings.ReplaceAll(s, "%", `\%`) }

// Crontab is the user's crontab: read whole, written whole.
type Crontab interface {
	Read() (string, error)
	Write(string) error
}

// SystemCrontab is the crontab managed by the crontab(1) program at path ("crontab" looks
// it up on PATH).
func SystemCrontab(path string) Crontab {
	if path == "" {
		path = "crontab"
	}
	return systemCrontab{path: path}
}

type systemCrontab struct{ path string }

func (c systemCrontab) Read() (string, error) {
	cmd := exec.Command(c.path, "-l")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		// Every cron tells "no crontab for <user>" and fails: that is an empty crontab.
		if strings.Contains(strings.ToLower(stderr.String()), "no crontab") {
			return "", nil
		}
		return "", fmt.Errorf("%s -l: %s", c.path, errText(err, stderr.String()))
	}
	return stdout.String(), nil
}

func (c systemCrontab) Write(content string) error {
	cmd := exec.Command(c.path, "-")
	cmd.Stdin = strings.NewReader(content)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s -: %s", c.path, errText(err, stderr.String()))
	}
	return nil
}

// errText is the first line of what a command said on standard error, else its error's.
func errText(err error, stderr string) string {
	s := strings.TrimSpace(stderr)
	if s == "" {
		s = err.Error()
	}
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// cronLineMarker returns the marker of a ckpt line, or "" for any other line.
func cronLineMarker(line string) string {
	line = strings.TrimRight(line, " \t\r\n")
	i := strings.LastIndex(line, cronMarker)
	if i < 0 {
		return ""
	}
	return line[i:]
}

// InstallCron puts line (from CronLine) into the crontab: it replaces the line of the
// same store if there is one, else appends it. Every other byte is kept; when the line is
// already there, nothing is written.
func InstallCron(c Crontab, line string) (changed bool, err error) {
	marker := cronLineMarker(line)
	if marker == "" || strings.ContainsAny(line, "\n\r") {
		return false, fmt.Errorf("crontab line %q: not a line made by CronLine", line)
	}
	old, err := c.Read()
	if err != nil {
		return false, err
	}
	var b strings.Builder
	placed := false
	for _, l := range strings.SplitAfter(old, "\n") {
		if l == "" {
			continue
		}
		if cronLineMarker(l) != marker {
			b.WriteString(l)
			continue
		}
		if !placed {
			b.WriteString(line + "\n")
			placed = true
		}
	}
	if !placed {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteString("\n") // cron ignores a last line without newline
		}
		b.WriteString(line + "\n")
	}
	if b.String() == old {
		return false, nil
	}
	return true, c.Write(b.String())
}

// UninstallCron removes the line of the store at home from the crontab, keeping every
// other byte. Nothing is written when there is no such line.
func UninstallCron(c Crontab, home string) (changed bool, err error) {
	marker := cronMarkerFor(home)
	old, err := c.Read()
	if err != nil {
		return false, err
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(old, "\n") {
		if cronLineMarker(l) == marker {
			changed = true
			continue
		}
		b.WriteString(l)
	}
	if !changed {
		return false, nil
	}
	return true, c.Write(b.String())
}

// CronInstalled returns the crontab line of the store at home, if there is one.
func CronInstalled(c Crontab, home string) (string, bool, error) {
	marker := cronMarkerFor(home)
	old, err := c.Read()
	if err != nil {
		return "", false, err
	}
	for _, l := range strings.Split(old, "\n") {
		if cronLineMarker(l) == marker {
			return strings.TrimRight(l, "\r"), true, nil
		}
	}
	return "", false, nil
}

// SystemdUnits returns a user service and timer that tick the store at home every
// interval, for machines without crontab. Install them as ~/.config/systemd/user/
// ckpt-tick.service and ckpt-tick.timer, then `systemctl --user enable --now
// ckpt-tick.timer`.
func SystemdUnits(every time.Duration, ckptPath, home string) (service, timer string, err error) {
	if _, err := CronSchedule(every); err != nil {
		return "", "", err
	}
	if err := checkPath("ckpt", ckptPath); err != nil {
		return "", "", err
	}
	if err := checkPath("home", home); err != nil {
		return "", "", err
	}
	home = filepath.Clean(home)
	service = "[Unit]\n" +
		"Description=ckpt cron tick for " + systemdEscape(home) + "\n" +
		"\n" +
		"[Service]\n" +
		"Type=oneshot\n" +
		"Environment=" + systemdQuote("CKPT_HOME="+home) + "\n" +
		"ExecStart=" + strings.ReplaceAll(systemdQuote(ckptPath), "$", "$$") + " cron tick\n"
	span := fmt.Sprintf("%dmin", int(every/time.Minute))
	timer = "[Unit]\n" +
		"Description=ckpt cron tick every " + span + "\n" +
		"\n" +
		"[Timer]\n" +
		"OnStartupSec=" + span + "\n" +
		"OnUnitActiveSec=" + span + "\n" +
		"\n" +
		"[Install]\n" +
		"WantedBy=timers.target\n"
	return service, timer, nil
}

// systemdEscape protects '%', which starts a specifier in unit files.
func systemdEscape(s string) string { return strings.ReplaceAll(s, "%", "%%") }

// systemdQuote makes s one double-quoted word of a unit file.
func systemdQuote(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `"`, `\"`)
	return `"` + systemdEscape(s) + `"`
}
