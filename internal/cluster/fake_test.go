package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/signal"
	"sort"
	"syscall"
	"testing"

	"google.golang.org/grpc"
	"gopkg.in/yaml.v3"

	"smarth/internal/rpc/dfspb"
)

// The launcher's tests run the test binary itself as the "smarth binary":
// with fakeDaemonEnv set, TestMain behaves as a daemon instead of running
// tests. This tests process handling, ready files, the state file and the
// namenode readiness checks without the real daemons.
const fakeDaemonEnv = "SMARTH_CLUSTER_FAKE_DAEMON"

// These steer the fake daemons of one kind (the variable's value, e.g.
// "datanode"): fakeFailEnv makes them exit 3 before ready, fakeIgnoreTermEnv
// makes only SIGKILL stop them. The environment rather than config keys:
// the launcher refuses keys the daemons do not have.
const (
	fakeFailEnv       = "SMARTH_CLUSTER_FAKE_FAIL"
	fakeIgnoreTermEnv = "SMARTH_CLUSTER_FAKE_IGNORE_TERM"
)

func TestMain(m *testing.M) {
	if os.Getenv(fakeDaemonEnv) == "1" {
		os.Exit(fakeDaemon(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeDaemon: `<kind> --config C --ready-file R [--log-file L]`, steered by
// fakeFailEnv and fakeIgnoreTermEnv.
func fakeDaemon(args []string) int {
	kind := args[0]
	flags := map[string]string{}
	for i := 1; i+1 < len(args); i += 2 {
		flags[args[i]] = args[i+1]
	}
	raw, err := os.ReadFile(flags["--config"])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg := map[string]any{}
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if os.Getenv(fakeFailEnv) == kind {
		fmt.Fprintln(os.Stderr, "fake failure: cannot bind")
		return 3
	}
	stop := make(chan os.Signal, 1)
	if os.Getenv(fakeIgnoreTermEnv) == kind {
		signal.Ignore(syscall.SIGTERM)
		signal.Notify(stop, syscall.SIGINT)
	} else {
		signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	}
	ready := map[string]any{"pid": os.Getpid()}
	switch kind {
	case "namenode":
		addr, _ := cfg["rpc_addr"].(string)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		var hosts []string
		if racks, ok := cfg["racks"].(map[string]any); ok {
			for h := range racks {
				if net.ParseIP(h) == nil { // the map also places client addresses
					hosts = append(hosts, h)
				}
			}
		}
		sort.Strings(hosts)
		srv := grpc.NewServer()
		dfspb.RegisterClientProtocolServer(srv, &fakeNameNode{hosts: hosts})
		go srv.Serve(l)
		ready["rpc"], ready["http"] = l.Addr().String(), "127.0.0.1:1"
	case "datanode":
		ready["id"], ready["data"] = "uuid-"+fmt.Sprint(cfg["hostname"]), "127.0.0.1:2"
	default:
		ready["rpc"] = "127.0.0.1:3"
	}
	b, _ := json.Marshal(ready)
	rf := flags["--ready-file"]
	if err := os.WriteFile(rf+".tmp", b, 0o644); err != nil {
		return 1
	}
	if err := os.Rename(rf+".tmp", rf); err != nil {
		return 1
	}
	<-stop
	return 0
}

type fakeNameNode struct {
	dfspb.UnimplementedClientProtocolServer
	hosts []string
}

func (f *fakeNameNode) GetDatanodeReport(context.Context, *dfspb.GetDatanodeReportRequest) (*dfspb.GetDatanodeReportResponse, error) {
	r := &dfspb.GetDatanodeReportResponse{}
	for _, h := range f.hosts {
		r.Datanodes = append(r.Datanodes, &dfspb.DatanodeInfo{Hostname: h, State: dfspb.DatanodeState_LIVE, IpAddr: "127.0.0.1", DataPort: 2})
	}
	return r, nil
}

func (f *fakeNameNode) SetSafeMode(context.Context, *dfspb.SetSafeModeRequest) (*dfspb.SetSafeModeResponse, error) {
	return &dfspb.SetSafeModeResponse{}, nil
}
