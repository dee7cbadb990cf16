package datanode

import (
	"net"
	"path/filepath"
	"syscall"
	"time"

	"smarth/internal/datanode/store"
	"smarth/internal/tune"
)

// netTuning is seed 001's part of the datanode: the settings profile
// applied to data sockets (net_profile, re-read when its file changes)
// and the per-block transfer log (transfer_log). Both may be absent.
type netTuning struct {
	profiles *tune.ProfileFile // nil: no profile, sockets as the kernel makes them
	log      *tune.LogWriter   // nil: transfer log off
}

// TransferLogOff as transfer_log disables the transfer log.
const TransferLogOff = "off"

// transferLogPath is where the transfer log goes: transfer_log, by default
// transfer.jsonl in data_dir (so a local cluster has one per node).
func transferLogPath(cfg Config) string {
	switch cfg.TransferLog {
	case TransferLogOff:
		return ""
	case "":
		return filepath.Join(cfg.dataDirs()[0], "transfer.jsonl")
	}
	return cfg.TransferLog
}

func newNetTuning(cfg Config) (*netTuning, error) {
	n := &netTuning{}
	if cfg.NetProfile != "" {
		pf, err := tune.OpenProfileFile(tune.LocalHost(), cfg.NetProfile)
		if err != nil {
			return nil, err
		}
		n.profiles = pf
	}
	if p := transferLogPath(cfg); p != "" {
		w, err := tune.OpenLog(p, tune.DefaultLogMax)
		if err != nil {
			return nil, err
		}
		n.log = w
	}
	return n, nil
}

func (n *netTuning) close() {
	if n != nil && n.log != nil {
		_ = n.log.Close()
	}
}

// profile is the profile in force now; a broken profile file keeps the
// last good one (and is logged), it does not stop data transfers.
func (d *DataNode) profile() (tune.Profile, bool) {
	if d.net == nil || d.net.profiles == nil {
		return tune.Profile{}, false
	}
	p, err := d.net.profiles.Current()
	if err != nil {
		d.log.Error("net profile not reloaded, keeping the previous one", "profile", p.Name, "err", err)
	}
	return p, true
}

// applyProfile sets the profile's socket settings on a data connection
// and logs, once per connection, any setting that did not take effect.
func (d *DataNode) applyProfile(c net.Conn) {
	p, ok := d.profile()
	if !ok {
		return
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return
	}
	states, err := tune.Apply(sc, p)
	if err != nil {
		d.log.Warn("net profile not applied", "profile", p.Name, "err", err)
		return
	}
	if ok, st := tune.AllInForce(states); !ok {
		d.log.Debug("net profile setting not in force", "profile", p.Name, "setting", st.Setting,
			"want", st.Want, "got", st.Got, "why", st.Note)
	}
}

// logTransfer appends the block's record to the transfer log, with the
// profile's settings read back from the upstream socket at the end of the
// transfer.
func (d *DataNode) logTransfer(r *receiver, rep store.Replica, end time.Time, cpu time.Duration) {
	if d.net == nil || d.net.log == nil {
		return
	}
	rec := tune.Record{
		Block: rep.Name(), Datanode: d.ID(), Bytes: r.bytes, Start: r.start, End: end,
		Packets: r.packets, PacketSize: r.packetSize, CPUSeconds: cpu.Seconds(), CPUScope: "process",
		Xceivers: d.xceivers(), Peer: r.up.RemoteAddr().String(), Client: r.op.GetClientName(),
		Stage: r.op.GetStage().String(), Profile: "default",
	}
	if p, ok := d.profile(); ok {
		rec.Profile = p.Name
		if sc, ok := r.up.(syscall.Conn); ok {
			rec.Settings, _ = tune.Inspect(sc, p)
		}
	}
	if err := d.net.log.Write(rec); err != nil {
		d.log.Warn("transfer log write failed", "err", err)
	}
}
