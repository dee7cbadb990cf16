package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"smarth/internal/datatransfer"
	"smarth/internal/diskperm"
)

// Short-circuit local reads on a local cluster: every client of it runs
// on the datanodes' host, so `up` gives each datanode a unix socket under
// the home (domain_socket_path, home/sockets/dn_<data port>.sock) and
// records the path in cluster.json, where its clients find it, as
// Hadoop's clients read dfs.domain.socket.path from their configuration.
// `fs get` then copies blocks from the replicas' files with the kernel.

// EnvShortCircuitReads turns a client's short-circuit reads off
// ("false") or leaves them on where a socket path is known (anything
// else); cluster.json's short_circuit_reads does the same for every
// client of the cluster.
const EnvShortCircuitReads = "SMARTH_SHORT_CIRCUIT_READS"

// maxSocketPath is the longest unix socket path (sun_path less its NUL).
const maxSocketPath = 107

// socketTemplate is the datanodes' domain_socket_path in a home.
func (l layout) socketTemplate() string {
	return filepath.Join(l.home, "sockets", "dn_"+datatransfer.PortToken+".sock")
}

// prepareSockets makes home/sockets (0755: every local user's client
// reaches its sockets; the home is a passage) and returns the datanodes'
// domain_socket_path, or "" with the reason printed when short-circuit
// reads cannot be had here: a home path too long for a unix socket, or
// a directory above it that other users could write (the datanodes would
// refuse it).
func (o *Options) prepareSockets(l layout) string {
	if v, ok := o.DataNode["domain_socket_path"]; ok {
		s, _ := v.(string)
		return s // the caller's own, which the datanodes check
	}
	p := l.socketTemplate()
	why := ""
	if n := len(datatransfer.SocketPath(p, 65535)); n > maxSocketPath {
		why = fmt.Sprintf("the socket path %s would be %d bytes, more than a unix socket's %d", p, n, maxSocketPath)
	} else if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		why = err.Error()
	} else if err := os.Chmod(filepath.Dir(p), 0o755); err != nil {
		why = err.Error()
	} else if err := diskperm.CheckSocketDirs(p); err != nil {
		why = err.Error()
	}
	if why != "" {
		fmt.Fprintf(o.Out, "short-circuit local reads off: %s\n", why)
		return ""
	}
	return p
}

// ClientDomainSocket is the domain socket path a client of the namenode
// at nn uses for short-circuit reads: the local cluster's (in Home())
// when nn is its namenode, unless cluster.json's short_circuit_reads or
// $SMARTH_SHORT_CIRCUIT_READS says false; "" for none.
func ClientDomainSocket(nn string) string {
	if off(os.Getenv(EnvShortCircuitReads)) {
		return ""
	}
	st, err := LoadState(Home())
	if err != nil || !sameAddr(st.NameNode, nn) || (st.ShortCircuitReads != nil && !*st.ShortCircuitReads) {
		return ""
	}
	return st.DomainSocketPath
}

func off(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "false", "0", "no", "off":
		return true
	}
	return false
}
