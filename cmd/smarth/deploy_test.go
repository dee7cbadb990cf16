package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"smarth/internal/auth"
	"smarth/internal/daemonconf"
	"smarth/internal/datanode"
	"smarth/internal/namenode"
	"smarth/internal/nodemanager"
	"smarth/internal/resourcemanager"
)

// The deployment doc (docs/deployment.md), the systemd units and the
// container image definition (deploy/) are checked against the code here:
// a config key, a command or a flag they name that the binary does not
// have fails these tests, so the doc cannot drift from the daemons.

const deploymentDoc = "../../docs/deployment.md"

// codeBlock is a fenced block of the doc: its language and lines.
type codeBlock struct {
	lang  string
	lines []string
}

func docBlocks(t *testing.T, path string) []codeBlock {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []codeBlock
	var cur *codeBlock
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "```") {
			if cur == nil {
				cur = &codeBlock{lang: strings.TrimPrefix(line, "```")}
			} else {
				blocks = append(blocks, *cur)
				cur = nil
			}
			continue
		}
		if cur != nil {
			cur.lines = append(cur.lines, sc.Text())
		}
	}
	if cur != nil {
		t.Fatalf("%s: a code block is not closed", path)
	}
	return blocks
}

// configHeader is how the doc names a config block: its first line.
var configHeader = regexp.MustCompile(`^# /etc/smarth/(\w+)\.yaml\b`)

// docConfigs returns the doc's example configs by daemon.
func docConfigs(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, b := range docBlocks(t, deploymentDoc) {
		if b.lang != "yaml" || len(b.lines) == 0 {
			continue
		}
		m := configHeader.FindStringSubmatch(b.lines[0])
		if m == nil {
			t.Errorf("%s: a yaml block does not start with `# /etc/smarth/DAEMON.yaml`: %q", deploymentDoc, b.lines[0])
			continue
		}
		out[m[1]] = strings.Join(b.lines, "\n") + "\n"
	}
	return out
}

// loadDocConfig loads the doc's config text of role as its daemon would
// on a host laid out as the doc says: the files under /etc/smarth it
// names (keys, tokens, certificates) are made, empty, under a scratch
// root, and the paths rewritten there, since the daemons' validation
// checks that they exist. It returns the directories the daemon writes,
// as the doc names them.
func loadDocConfig(t *testing.T, role, text string) ([]string, error) {
	t.Helper()
	root := t.TempDir()
	secret, err := auth.LoadOrCreateKey(filepath.Join(root, "auth.key"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range regexp.MustCompile(`/etc/smarth/\S+`).FindAllString(text, -1) {
		f := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case strings.HasPrefix(p, "/etc/smarth/keys/") && strings.HasSuffix(p, ".key"):
			_, err = auth.LoadOrCreateKey(f) // a secret, as the namenode makes them
		case strings.HasSuffix(p, ".token"):
			err = auth.WriteTokenFile(f, auth.UserCredential(secret, "smarth")) // as smarth login does
		default: // certificates: read at start, not at load
			err = os.WriteFile(f, nil, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(root, role+".yaml")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(text, "/etc/smarth/", root+"/etc/smarth/")), 0o600); err != nil {
		t.Fatal(err)
	}
	return loadDaemonConfig(role, path)
}

// loadDaemonConfig loads a config file as the daemon named role does
// (daemonconf.Load over its defaults, then its Validate) and returns the
// directories it writes.
func loadDaemonConfig(role, path string) (dirs []string, err error) {
	switch role {
	case "namenode":
		c := namenode.DefaultConfig()
		err := loadValid(path, &c)
		return []string{c.MetaDir}, err
	case "datanode":
		c := datanode.DefaultConfig()
		err := loadValid(path, &c)
		return append([]string{c.DataDir}, c.DataDirs...), err
	case "resourcemanager":
		c := resourcemanager.DefaultConfig()
		err := loadValid(path, &c)
		return []string{c.HistoryDir}, err
	case "nodemanager":
		c := nodemanager.DefaultConfig()
		c.Registry = mrRegistry() // as the nodemanager command does
		err := loadValid(path, &c)
		return []string{c.WorkDir}, err
	}
	return nil, os.ErrNotExist
}

// loadValid is daemonconf.Load of path over the defaults in c, then c's
// Validate, as each daemon command does.
func loadValid[C interface{ Validate() error }](path string, c *C) error {
	if err := daemonconf.Load(path, c); err != nil {
		return err
	}
	return (*c).Validate()
}

// TestDeploymentDocConfigsLoad loads every example config of the doc with
// its daemon's loader, which refuses unknown keys, and its validation;
// every daemon has one, and each keeps its data under the layout's
// /var/lib/smarth/DAEMON.
func TestDeploymentDocConfigsLoad(t *testing.T) {
	confs := docConfigs(t)
	for _, role := range daemonconf.Roles() {
		text, ok := confs[role]
		if !ok {
			t.Errorf("%s: no example config for the %s (a yaml block starting `# /etc/smarth/%s.yaml`)", deploymentDoc, role, role)
			continue
		}
		dirs, err := loadDocConfig(t, role, text)
		if err != nil {
			t.Errorf("%s: the %s example config does not load: %v", deploymentDoc, role, err)
			continue
		}
		if want := "/var/lib/smarth/" + role; !slices.Contains(dirs, want) {
			t.Errorf("%s: the %s example config keeps its data in %q, not the layout's %s", deploymentDoc, role, dirs, want)
		}
	}
	for role := range confs {
		if !slices.Contains(daemonconf.Roles(), role) {
			t.Errorf("%s: an example config for %q, which is no daemon (%v)", deploymentDoc, role, daemonconf.Roles())
		}
	}
}

// smarthCommand returns the argument list of a doc line that runs smarth
// (after a shell prompt's environment or sudo, if any), or nil.
func smarthCommand(line string) []string {
	line = strings.TrimSpace(line)
	if i := strings.Index(line, " #"); i >= 0 {
		line = line[:i]
	}
	words := shellWords(line)
	if len(words) > 2 && words[0] == "docker" && words[1] == "run" {
		// The image's entrypoint is smarth: what follows the image name
		// (smarth) is a smarth command line.
		if i := slices.Index(words, "smarth"); i > 0 {
			return words[i+1:]
		}
		return nil
	}
	for i, w := range words {
		if w == "smarth" || w == "/usr/local/bin/smarth" {
			// smarth must be the command word: only sudo or VAR=value before it.
			for _, pre := range words[:i] {
				if pre != "sudo" && pre != "-u" && pre != "smarth" && !strings.Contains(pre, "=") {
					return nil
				}
			}
			return words[i+1:]
		}
		if !strings.Contains(w, "=") && w != "sudo" && w != "-u" {
			return nil
		}
	}
	return nil
}

// shellWords splits a command line as sh does for the doc's simple lines:
// blanks separate words, single and double quotes group them.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// checkCommandParses finds args' command in the CLI as main would and
// parses its flags and arguments without running it: an unknown command,
// flag or argument count is an error.
func checkCommandParses(args []string) error {
	root := newRootCmd()
	args = hadoopArgs(root, args)
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	// A group (fs, admin, job) runs no command of its own: `smarth fs
	// putt` finds fs with the argument putt, which cobra leaves to it.
	if !cmd.Runnable() || cmd.HasAvailableSubCommands() {
		return errNotRunnable(cmd.CommandPath())
	}
	if cmd.DisableFlagParsing {
		return nil // the command parses its own arguments (job run APP ...)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	return cmd.ValidateArgs(cmd.Flags().Args())
}

type errNotRunnable string

func (e errNotRunnable) Error() string { return string(e) + " is a group of commands, not one" }

// docCommands returns every smarth command line in the doc's code blocks
// and inline code spans, continuation lines joined.
func docCommands(t *testing.T, path string) [][]string {
	t.Helper()
	var cmds [][]string
	for _, b := range docBlocks(t, path) {
		if b.lang != "sh" {
			continue
		}
		joined := strings.ReplaceAll(strings.Join(b.lines, "\n"), "\\\n", " ")
		for _, line := range strings.Split(joined, "\n") {
			if args := smarthCommand(line); args != nil {
				cmds = append(cmds, args)
			}
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile("`(smarth [^`]+)`").FindAllStringSubmatch(string(raw), -1) {
		if args := smarthCommand(m[1]); args != nil {
			cmds = append(cmds, args)
		}
	}
	return cmds
}

// TestDeploymentDocCommandsParse parses every smarth command line of the
// doc as the CLI would; every daemon's start line is among them.
func TestDeploymentDocCommandsParse(t *testing.T) {
	cmds := docCommands(t, deploymentDoc)
	t.Logf("%d smarth command lines in %s", len(cmds), deploymentDoc)
	started := map[string]bool{}
	for _, args := range cmds {
		if err := checkCommandParses(args); err != nil {
			t.Errorf("%s: `smarth %s` does not parse: %v", deploymentDoc, strings.Join(args, " "), err)
		}
		if len(args) > 2 && slices.Contains(daemonconf.Roles(), args[0]) && args[1] == "--config" {
			started[args[0]] = true
			if want := "/etc/smarth/" + args[0] + ".yaml"; args[2] != want {
				t.Errorf("%s: `smarth %s` reads %s, not the layout's %s", deploymentDoc, strings.Join(args, " "), args[2], want)
			}
		}
	}
	for _, role := range daemonconf.Roles() {
		if !started[role] {
			t.Errorf("%s: no `smarth %s --config ...` line", deploymentDoc, role)
		}
	}
	for _, want := range []string{"login", "fs", "job"} {
		if !slices.ContainsFunc(cmds, func(a []string) bool { return a[0] == want }) {
			t.Errorf("%s: no `smarth %s` command (first start needs it)", deploymentDoc, want)
		}
	}
}

// TestDocCommandCheckCatchesMistakes is the check's control: a misspelt
// command, flag or subcommand fails it.
func TestDocCommandCheckCatchesMistakes(t *testing.T) {
	for _, bad := range []string{
		"smarth namenod --config /etc/smarth/namenode.yaml",
		"smarth namenode --conifg /etc/smarth/namenode.yaml",
		"smarth login --secret /x",
		"smarth fs",
		"smarth fs putt a b",
		"smarth namenode extra-arg",
	} {
		if err := checkCommandParses(smarthCommand(bad)); err == nil {
			t.Errorf("`%s` parsed; the doc check would let it through", bad)
		}
	}
	if err := checkCommandParses(smarthCommand("smarth job run wordcount --input /a --output /b")); err != nil {
		t.Errorf("a real command failed the check: %v", err)
	}
}

// unit is a systemd unit file: section -> key -> values in order.
type unit map[string]map[string][]string

func parseUnit(t *testing.T, path string) unit {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	u := unit{}
	sec := ""
	for n, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			sec = line[1 : len(line)-1]
			if u[sec] == nil {
				u[sec] = map[string][]string{}
			}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || sec == "" {
				t.Fatalf("%s:%d: not a key=value in a section: %q", path, n+1, line)
			}
			u[sec][k] = append(u[sec][k], v)
		}
	}
	return u
}

func (u unit) get(sec, key string) string {
	vs := u[sec][key]
	if len(vs) == 0 {
		return ""
	}
	return vs[len(vs)-1]
}

// TestSystemdUnits checks each daemon's unit: its ExecStart runs that
// daemon with the layout's config and log file and flags the binary has,
// it may write the config's data directory and the log directory and
// nothing else, and it runs as smarth (the node manager as root). Where
// systemd-analyze is installed it verifies the units too.
func TestSystemdUnits(t *testing.T) {
	confs := docConfigs(t)
	for _, role := range daemonconf.Roles() {
		path := "../../deploy/systemd/smarth-" + role + ".service"
		u := parseUnit(t, path)
		exec := strings.Fields(u.get("Service", "ExecStart"))
		if len(exec) < 2 || exec[0] != "/usr/local/bin/smarth" || exec[1] != role {
			t.Errorf("%s: ExecStart %q does not run /usr/local/bin/smarth %s", path, exec, role)
			continue
		}
		if err := checkCommandParses(exec[1:]); err != nil {
			t.Errorf("%s: ExecStart does not parse: %v", path, err)
		}
		flag := func(name string) string {
			if i := slices.Index(exec, name); i >= 0 && i+1 < len(exec) {
				return exec[i+1]
			}
			return ""
		}
		if got, want := flag("--config"), "/etc/smarth/"+role+".yaml"; got != want {
			t.Errorf("%s: --config %q, the layout's is %s", path, got, want)
		}
		if got, want := flag("--log-file"), "/var/log/smarth/"+role+".log"; got != want {
			t.Errorf("%s: --log-file %q, the layout's is %s", path, got, want)
		}
		// The unit must let the daemon write what its doc config names.
		dirs, err := loadDocConfig(t, role, confs[role])
		if err != nil {
			t.Errorf("%s config: %v", role, err)
		}
		rw := strings.Fields(strings.Join(u["Service"]["ReadWritePaths"], " "))
		for _, d := range append(dirs, "/var/log/smarth") {
			if d != "" && !slices.Contains(rw, d) {
				t.Errorf("%s: ReadWritePaths %q lack %s, which the daemon writes (docs/deployment.md)", path, rw, d)
			}
		}
		want := map[string]string{"Type": "simple", "Restart": "on-failure", "ProtectSystem": "strict", "PrivateTmp": "yes", "NoNewPrivileges": "yes", "User": "smarth"}
		if role == "nodemanager" {
			want["User"] = "root" // containers run as other users
			want["Delegate"] = "yes"
		}
		for k, v := range want {
			if got := u.get("Service", k); got != v {
				t.Errorf("%s: %s=%q, want %q", path, k, got, v)
			}
		}
		if u.get("Service", "LimitNOFILE") == "" {
			t.Errorf("%s: no LimitNOFILE", path)
		}
		if u.get("Service", "ProtectControlGroups") == "yes" && role == "nodemanager" {
			t.Errorf("%s: ProtectControlGroups would stop the node manager making containers' cgroups", path)
		}
	}
	verifyUnitsWithSystemd(t)
}

// verifyUnitsWithSystemd runs systemd-analyze verify on copies of the
// units whose binary path points at an executable stand-in (verify
// refuses a missing ExecStart binary); it prints a line for each key or
// value systemd does not take, with exit status 0, so any output fails.
func verifyUnitsWithSystemd(t *testing.T) {
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze not installed: units checked by the parse above only")
		return
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "smarth")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	units, err := filepath.Glob("../../deploy/systemd/*.service")
	if err != nil || len(units) != len(daemonconf.Roles()) {
		t.Fatalf("deploy/systemd: %d units (%v), want one per daemon", len(units), err)
	}
	var copies []string
	for _, src := range units {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, filepath.Base(src))
		if err := os.WriteFile(dst, []byte(strings.ReplaceAll(string(b), "/usr/local/bin/smarth", bin)), 0o644); err != nil {
			t.Fatal(err)
		}
		copies = append(copies, dst)
	}
	out, err := exec.Command(sa, append([]string{"verify"}, copies...)...).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify deploy/systemd: %v\n%s", err, out)
	}
}

// TestContainerfile checks the image definition against the repository:
// it builds ./cmd/smarth (which exists and is package main) statically
// with go.mod's Go version, and its entrypoint is that binary.
func TestContainerfile(t *testing.T) {
	b, err := os.ReadFile("../../deploy/Containerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	build := regexp.MustCompile(`(?m)^RUN CGO_ENABLED=0 go build .*-o (\S+) (\./\S+)\s*$`).FindStringSubmatch(text)
	if build == nil {
		t.Fatal("deploy/Containerfile: no `RUN CGO_ENABLED=0 go build ... -o OUT ./PKG` line")
	}
	if build[2] != "./cmd/smarth" {
		t.Errorf("deploy/Containerfile builds %s, not ./cmd/smarth", build[2])
	}
	if _, err := os.Stat(filepath.Join("../..", build[2], "main.go")); err != nil {
		t.Errorf("deploy/Containerfile builds %s: %v", build[2], err)
	}
	if !regexp.MustCompile(`(?m)^COPY --from=build ` + regexp.QuoteMeta(build[1]) + ` /usr/local/bin/smarth$`).MatchString(text) {
		t.Errorf("deploy/Containerfile: the built %s is not copied to /usr/local/bin/smarth", build[1])
	}
	if !strings.Contains(text, `ENTRYPOINT ["smarth"]`) {
		t.Error(`deploy/Containerfile: no ENTRYPOINT ["smarth"]`)
	}
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goVer := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(string(mod))
	from := regexp.MustCompile(`(?m)^FROM golang:(\d+\.\d+)\S* AS build$`).FindStringSubmatch(text)
	if goVer == nil || from == nil || goVer[1] != from[1] {
		t.Errorf("deploy/Containerfile's build image %v does not match go.mod's go %v", from, goVer)
	}
	for _, v := range []string{"/etc/smarth", "/var/lib/smarth", "/var/log/smarth"} {
		if !strings.Contains(text, `"`+v+`"`) {
			t.Errorf("deploy/Containerfile: no VOLUME %s (docs/deployment.md's layout)", v)
		}
	}
}
