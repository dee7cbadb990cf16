package testbed

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"

	"smarth/internal/testbed/daemonplan"
	"smarth/internal/testbed/delayproxy"
	"smarth/internal/testbed/topo"
)

// proxyConfigs groups the planned daemons' proxies by host and adds the
// delays: this host's latency on the way out, each peer's on the way in.
func proxyConfigs(t *topo.Topology, plan []daemonplan.Daemon) map[string]delayproxy.Config {
	peers := map[string]delayproxy.Delay{}
	for _, h := range t.Hosts {
		peers[h.Addr.String()] = delayproxy.Delay{Latency: h.Shape.Latency, Jitter: h.Shape.Jitter}
	}
	cfgs := map[string]delayproxy.Config{}
	for _, d := range plan {
		for _, p := range d.Proxies {
			c, ok := cfgs[p.Host]
			if !ok {
				h, _ := t.Host(p.Host)
				c = delayproxy.Config{Out: delayproxy.Delay{Latency: h.Shape.Latency, Jitter: h.Shape.Jitter}, Peers: peers}
			}
			c.Routes = append(c.Routes, delayproxy.Route{Listen: p.Listen, Target: p.Target})
			cfgs[p.Host] = c
		}
	}
	return cfgs
}

// startProxies starts one delay proxy per host that needs one and waits
// until they listen.
func (m *Manager) startProxies(ctx context.Context, s *State, plan []daemonplan.Daemon) error {
	cfgs := proxyConfigs(s.Topology, plan)
	var started []*child
	for _, h := range s.Topology.Hosts {
		cfg, ok := cfgs[h.Name]
		if !ok {
			continue
		}
		dir := filepath.Join(s.WorkDir, h.Name)
		conf := filepath.Join(dir, "conf", "delayproxy.json")
		ready := filepath.Join(dir, "run", "delayproxy.ready")
		if err := os.MkdirAll(filepath.Dir(ready), 0o755); err != nil {
			return err
		}
		data, _ := json.MarshalIndent(cfg, "", "  ")
		if err := writeFileAtomic(conf, data); err != nil {
			return err
		}
		argv := []string{s.Tool, "testbed", "delayproxy", "--config", conf, "--ready-file", ready}
		cmd, c, err := m.launch(s, h.Name, filepath.Join(dir, "logs", "delayproxy.out"), argv, s.Env(h.Name))
		if err != nil {
			return err
		}
		c.name, c.ready = "delayproxy@"+h.Name, ready
		s.Proxies = append(s.Proxies, ProxyState{Host: h.Name, PID: cmd.Process.Pid, ConfigFile: conf})
		started = append(started, c)
		m.logf("started delay proxy on %s (pid %d, %d ports)", h.Name, cmd.Process.Pid, len(cfg.Routes))
	}
	if len(started) == 0 {
		return nil
	}
	if err := s.save(); err != nil {
		return err
	}
	return m.waitReady(ctx, s, started)
}
