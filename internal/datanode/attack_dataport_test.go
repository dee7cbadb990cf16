package datanode

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"smarth/internal/datatransfer"
)

// Issue 23, hole 7: the data port. An op header announcing its length
// was given a buffer of that length before any byte of it came, and one
// host's idle connections could take every slot of the port.

const (
	opFloodAddrEnv = "SMARTH_TEST_OPFLOOD_ADDR"
	opFloodBatch   = 250
)

// teaser is what each flooding connection sends: a READ_BLOCK prefix
// announcing the largest header the protocol allows, and one byte of it.
func teaser() []byte {
	b := binary.BigEndian.AppendUint16(nil, datatransfer.Version)
	b = append(b, byte(datatransfer.OpReadBlock))
	b = binary.BigEndian.AppendUint32(b, datatransfer.MaxHeaderLen)
	return append(b, 0x0a)
}

// TestOpFloodHelper is the flooder of TestAttackDataPortOpHeaderMemory,
// a child process so that its connections' memory is not counted as the
// datanode's: on each line "more" from stdin it opens opFloodBatch
// connections, sends each the 8-byte teaser and answers "ready N".
func TestOpFloodHelper(t *testing.T) {
	addr := os.Getenv(opFloodAddrEnv)
	if addr == "" {
		t.Skip("the flooder of TestAttackDataPortOpHeaderMemory, run only as its child")
	}
	var held []net.Conn
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		for range opFloodBatch {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				fmt.Printf("dial: %v\n", err)
				return
			}
			c.Write(teaser())
			held = append(held, c)
		}
		fmt.Printf("ready %d\n", len(held))
	}
}

// TestAttackDataPortOpHeaderMemory: 3,000 connections each announcing a
// 1 MiB op header and sending 8 bytes of it. Before the fix each got a
// 1 MiB buffer at once (3 GB); now the datanode's heap grows by what the
// connections themselves cost. The flood goes in batches so that a
// regression fails at the first batch past the bound instead of
// allocating gigabytes.
func TestAttackDataPortOpHeaderMemory(t *testing.T) {
	const conns = 3000
	const bound = 16 << 20 // about 5.5 KiB a connection
	nn := startFakeNameNode(t)
	dn, _ := startDataNode(t, nn, "", func(c *Config) {
		// The caps of the port are not what this test is about.
		c.MaxXceivers, c.MaxXceiversPerHost = 2*conns, 2*conns
	})
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()

	child := exec.Command(os.Args[0], "-test.run=^TestOpFloodHelper$")
	child.Env = append(os.Environ(), opFloodAddrEnv+"="+dn.DataAddr())
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); child.Wait() })
	replies := bufio.NewReader(out)
	var grew uint64
	for n := opFloodBatch; n <= conns; n += opFloodBatch {
		io.WriteString(stdin, "more\n")
		line, err := replies.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "ready "+strconv.Itoa(n)) {
			t.Fatalf("flooder after %d connections: %q %v", n-opFloodBatch, line, err)
		}
		waitFor(t, fmt.Sprintf("the datanode to hold %d data connections", n), func() bool { return dn.xceivers() >= n })
		if grew = heap() - min(before, heap()); grew > bound {
			t.Fatalf("%d connections that sent 8 bytes each grew the datanode's heap by %d MiB (bound %d MiB)", n, grew>>20, bound>>20)
		}
	}
	t.Logf("%d connections that sent 8 bytes each: heap grew %.1f MiB (%.1f KiB each)", conns, float64(grew)/(1<<20), float64(grew)/conns/1024)
}

// TestAttackDataPortIdleFloodFromOneHost: one host (127.0.0.2) opening
// more idle data connections than the port allows does not shut out a
// reader from another address. Before the fix every slot went to the
// flood and the reader was refused busy.
func TestAttackDataPortIdleFloodFromOneHost(t *testing.T) {
	const max = 40
	nn := startFakeNameNode(t)
	dn, _ := startDataNode(t, nn, "", func(c *Config) { c.MaxXceivers = max })
	data := randomData(200_000, 7)
	writeBlock(t, 7, 1, data, dn)

	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
	var flood []net.Conn
	defer func() {
		for _, c := range flood {
			c.Close()
		}
	}()
	for range 2 * max {
		if c, err := d.Dial("tcp", dn.DataAddr()); err == nil {
			flood = append(flood, c)
		} // else reset during the handshake: refused already
	}
	share := dn.cfg.MaxXceiversPerHost
	waitFor(t, "the datanode to hold 127.0.0.2's idle connections", func() bool { return dn.xceivers() >= share })
	mustRead(t, dn, 7, 1, data)
	if held, refused := dn.dataGate.ConnsOf("127.0.0.2"), dn.dataGate.Refused(); held != share || refused < uint64(2*max-share) {
		t.Errorf("127.0.0.2 holds %d data connections with %d refused, want %d held and the other %d refused", held, refused, share, 2*max-share)
	}
}
