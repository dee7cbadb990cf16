package ipc

import (
	"bufio"
	"errors"
	"net"
	"runtime"
	"sync"
	"time"
)

// WriteTimeout bounds how long a connection's writes may stall: a peer
// that reads nothing for about this long (the deadline is refreshed when
// less than half of it is left, so between half and all of it) loses the
// connection, and on the client every call pending on it fails
// Unavailable. Hadoop IPC's responder and gRPC's keepalive bound a stuck
// peer the same way.
const WriteTimeout = 60 * time.Second

// frameWriter sends the frames of one connection. Whoever queues a frame
// while no one is writing becomes the writer: it writes everything queued,
// and frames queued meanwhile by others (the replies of one group commit,
// the calls of many client goroutines) go out together in its next write,
// one system call for the lot. Compared with a dedicated writer goroutine
// (gRPC's loopy writer) no goroutine is woken per batch.
//
// On the server the writer is the handler that replied: it waits for the
// socket (at most the write deadline), which is the backpressure a
// client that does not read gets. On the client (async) the writer is a
// goroutine started for the batch, so a caller never waits for the socket
// beyond its own deadline.
type frameWriter struct {
	nc      net.Conn
	async   bool
	timeout time.Duration // WriteTimeout but in tests

	mu      sync.Mutex // guards the fields below
	queue   []*[]byte
	spare   []*[]byte
	writing bool
	err     error // the first write error, or errGoAway; later sends fail with it
	// closeAfter: close the write side once the queue is written.
	closeAfter bool

	bw       *bufio.Writer // used only by the goroutine that is writing
	deadline time.Time     // the write deadline set on nc; only the writer touches it
	// onError runs once, outside mu, after the first write error.
	onError func(error)
	// onReplies, when set, is told how many reply frames left the queue,
	// written or dropped: the server frees a call's in-flight slot only
	// then, so unwritten replies are bounded by MaxInFlight.
	onReplies func(n int)
}

func newFrameWriter(nc net.Conn, timeout time.Duration, onError func(error)) *frameWriter {
	return &frameWriter{nc: nc, timeout: timeout, bw: bufio.NewWriterSize(nc, 32<<10), onError: onError}
}

// send queues frame (taking ownership: it goes back to the pool once
// written) and writes the queue unless another goroutine is writing it.
// An error means the connection is broken; a nil error does not promise
// delivery (the goroutine writing may still fail), which is why the client
// fails every pending call when a connection breaks.
func (w *frameWriter) send(frame *[]byte) error {
	w.mu.Lock()
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		w.drop([]*[]byte{frame})
		return err
	}
	w.queue = append(w.queue, frame)
	if w.writing {
		w.mu.Unlock()
		return nil
	}
	w.writing = true
	w.mu.Unlock()
	if w.async {
		go w.drain()
		return nil
	}
	return w.drain()
}

// drain writes the queue until it is empty; one goroutine at a time.
func (w *frameWriter) drain() error {
	// Yield once before the first write, as gRPC's loopy writer does
	// before flushing a small batch: goroutines made runnable together
	// with this one (the handlers released by one group commit, client
	// goroutines woken by one batch of replies) queue their frames
	// meanwhile and go out in the same write.
	runtime.Gosched()
	w.mu.Lock()
	for {
		batch := w.queue
		w.queue = w.spare[:0]
		w.mu.Unlock()
		err := w.write(batch)
		w.mu.Lock()
		w.spare = batch[:0]
		if err != nil {
			w.err = err
			dropped := w.queue
			w.queue = nil
			w.writing = false
			w.mu.Unlock()
			w.drop(dropped)
			w.onError(err)
			return err
		}
		if len(w.queue) == 0 {
			w.writing = false
			closeNow := w.closeAfter
			w.mu.Unlock()
			if closeNow {
				closeWrite(w.nc)
			}
			return nil
		}
	}
}

// errGoAway: the server asked this connection to go away; the frame was
// not sent and can go on a new connection.
var errGoAway = errors.New("ipc: connection going away")

// closeWrite lets the frames queued so far go out, refuses later ones
// with errGoAway, then closes the connection's write side so the server
// reads an end of stream after the last call.
func (w *frameWriter) closeWrite() {
	w.mu.Lock()
	if w.err != nil {
		w.mu.Unlock()
		return
	}
	w.err = errGoAway
	if w.writing {
		w.closeAfter = true // the writer closes when it has written the queue
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	closeWrite(w.nc)
}

func closeWrite(nc net.Conn) {
	if cw, ok := nc.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	// Otherwise the server's read deadline ends the connection.
}

func (w *frameWriter) write(batch []*[]byte) error {
	// One deadline per half WriteTimeout rather than per write: setting
	// it is not free, and a write needs only some time left.
	if now := time.Now(); w.deadline.Sub(now) < w.timeout/2 {
		w.deadline = now.Add(w.timeout)
		if err := w.nc.SetWriteDeadline(w.deadline); err != nil {
			w.drop(batch)
			return err
		}
	}
	var err error
	replies := 0
	for i, b := range batch {
		if err == nil {
			_, err = w.bw.Write(*b)
		}
		if isReply(*b) {
			replies++
		}
		putBuf(b)
		batch[i] = nil
	}
	if err == nil {
		err = w.bw.Flush()
	}
	if replies > 0 && w.onReplies != nil {
		w.onReplies(replies)
	}
	return err
}

// isReply reports whether frame (length prefix included) is a reply,
// with or without a state id: each frees its call's in-flight slot.
func isReply(frame []byte) bool {
	return len(frame) > 4 && (frame[4] == kindReply || frame[4] == kindReplyState)
}

// drop discards frames that will never be written.
func (w *frameWriter) drop(frames []*[]byte) {
	replies := 0
	for _, b := range frames {
		if b == nil {
			continue
		}
		if isReply(*b) {
			replies++
		}
		putBuf(b)
	}
	if replies > 0 && w.onReplies != nil {
		w.onReplies(replies)
	}
}
