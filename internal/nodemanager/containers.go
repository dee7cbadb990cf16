package nodemanager

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"

	"smarth/internal/container"
	"smarth/internal/mapreduce"
	"smarth/internal/rpc/mrpb"
)

// container is the attempt's container, with the job's request
// (memory-mb, vcores; defaults when the app has none), refused above
// this node's max_memory_mb and max_vcores.
func (nm *NodeManager) container(l *mrpb.TaskLaunch, logger *slog.Logger, localize func(dir string, uid, gid int) error) (*container.Container, error) {
	req := func(name string, def, most int) (int, error) {
		v, ok := l.Params[name]
		if !ok || v == "" {
			return def, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("task %s: %s=%q: want a positive integer", l.AttemptId, name, v)
		}
		if n > most {
			return 0, fmt.Errorf("task %s: %s=%d is above this node's maximum %d (max_%s)", l.AttemptId, name, n, most, strings.ReplaceAll(name, "-", "_"))
		}
		return n, nil
	}
	mb, err := req(mapreduce.ParamMemoryMB, mapreduce.DefaultTaskMemoryMB, nm.cfg.MaxMemoryMB)
	if err != nil {
		return nil, err
	}
	vcores, err := req(mapreduce.ParamVCores, mapreduce.DefaultTaskVCores, nm.cfg.MaxVCores)
	if err != nil {
		return nil, err
	}
	spec := container.Spec{ID: l.AttemptId, User: l.User, MemoryBytes: int64(mb) << 20, VCores: vcores, Logger: logger, Localize: localize}
	if nm.tokens != nil {
		spec.Credential = func(ctx context.Context) (string, error) { return nm.tokens.get(ctx, l.JobId, l.User) }
	}
	return nm.containers.New(spec), nil
}

func portOf(addr string) string {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "0"
	}
	return port
}
