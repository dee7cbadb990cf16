package doctor

import (
	"context"
	"os/exec"
	"strings"
	"syscall"
)

// staUnsync is the kernel's STA_UNSYNC status bit: set while no time
// daemon has disciplined the clock.
const staUnsync = 0x0040

// timeDaemons are the processes that keep the clock in sync.
var timeDaemons = []string{"chronyd", "ntpd", "systemd-timesyncd", "openntpd", "timesyncd"}

// clockSync asks timedatectl when systemd answers, else the kernel: the
// adjtimex status is what every NTP daemon sets, so it works in containers
// (it is the host kernel's clock) and without systemd.
func clockSync(ctx context.Context, root string) (synced, known bool, source string) {
	daemons := runningAny(root, timeDaemons)
	src := "adjtimex"
	if len(daemons) > 0 {
		src += ", " + strings.Join(daemons, ",") + " running"
	}
	if root == "/" {
		out, err := exec.CommandContext(ctx, "timedatectl", "show", "-p", "NTPSynchronized", "--value").Output()
		if v := strings.TrimSpace(string(out)); err == nil && (v == "yes" || v == "no") {
			return v == "yes", true, "timedatectl"
		}
	}
	var tx syscall.Timex
	if _, err := syscall.Adjtimex(&tx); err != nil {
		return false, false, "adjtimex: " + err.Error()
	}
	return tx.Status&staUnsync == 0, true, src
}

// checkClock: leases, block tokens, job timeouts and log correlation
// across hosts all assume clocks within seconds of each other.
func checkClock(ctx context.Context, e *Env) []Result {
	r := Result{ID: "clock", Title: "clock synchronisation",
		Why: "leases, tokens, heartbeat timeouts and logs compared across hosts need clocks in sync (NTP/chrony)"}
	if e.ClockSync == nil {
		r.Status, r.Value = Skip, "no way to tell"
		return []Result{r}
	}
	synced, known, src := e.ClockSync(ctx)
	switch {
	case !known:
		r.Status, r.Value = Warn, "unknown ("+src+")"
	case synced:
		r.Status, r.Value = OK, "synchronised ("+src+")"
	default:
		r.Status, r.Value = Fail, "not synchronised ("+src+")"
	}
	if r.Status != OK {
		r.FixCmd = "apt-get install -y chrony && chronyd  # or: timedatectl set-ntp true"
	}
	return []Result{r}
}
