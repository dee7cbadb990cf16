package datatransfer

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"sync"
)

// Flags are a packet's flag bits.
type Flags uint8

const (
	FlagLast      Flags = 1 << 0 // last packet of the block
	FlagSync      Flags = 1 << 1 // the writer asks for the data to be synced to disk
	FlagHeartbeat Flags = 1 << 2 // keep-alive, no data, seqno HeartbeatSeqno
	knownFlags          = FlagLast | FlagSync | FlagHeartbeat
)

// Packet format limits and defaults.
const (
	PacketHeaderLen     = 25
	MaxPacketDataLen    = 16 << 20
	MaxBytesPerChecksum = 64 << 10
	// MinBytesPerChecksum bounds the checksum bookkeeping a peer can make
	// us hold: a 16 MiB packet in 1-byte chunks carries 64 MiB of
	// checksums (80 MiB per packet); in 64-byte chunks, 1 MiB.
	MinBytesPerChecksum     = 64
	DefaultPacketDataLen    = 64 << 10
	DefaultBytesPerChecksum = 512
	HeartbeatSeqno          = int64(-1)
)

// PacketHeader is the fixed 25-byte packet header.
type PacketHeader struct {
	DataLen          uint32
	Offset           int64 // offset in the block of the first data byte
	Seqno            int64
	Flags            Flags
	BytesPerChecksum uint32
}

// Last reports whether the packet ends the block (or the read).
func (h PacketHeader) Last() bool { return h.Flags&FlagLast != 0 }

// Heartbeat reports whether the packet is a keep-alive.
func (h PacketHeader) Heartbeat() bool { return h.Flags&FlagHeartbeat != 0 }

// ChecksumLen is the length of the checksum section that follows the header.
func (h PacketHeader) ChecksumLen() int {
	return ChunkCount(int(h.DataLen), int(h.BytesPerChecksum)) * ChecksumSize
}

// Put encodes h into b[:PacketHeaderLen].
func (h PacketHeader) Put(b []byte) {
	_ = b[PacketHeaderLen-1]
	binary.BigEndian.PutUint32(b[0:], h.DataLen)
	binary.BigEndian.PutUint64(b[4:], uint64(h.Offset))
	binary.BigEndian.PutUint64(b[12:], uint64(h.Seqno))
	b[20] = byte(h.Flags)
	binary.BigEndian.PutUint32(b[21:], h.BytesPerChecksum)
}

// Validate checks the header against the protocol's rules.
func (h PacketHeader) Validate() error {
	switch {
	case h.DataLen > MaxPacketDataLen:
		return fmt.Errorf("%w: packet data length %d exceeds %d", ErrProtocol, h.DataLen, MaxPacketDataLen)
	case h.BytesPerChecksum < MinBytesPerChecksum || h.BytesPerChecksum > MaxBytesPerChecksum:
		return fmt.Errorf("%w: bytes per checksum %d not in %d..%d", ErrProtocol, h.BytesPerChecksum, MinBytesPerChecksum, MaxBytesPerChecksum)
	case h.Offset < 0:
		return fmt.Errorf("%w: negative packet offset %d", ErrProtocol, h.Offset)
	case h.Flags&^knownFlags != 0:
		return fmt.Errorf("%w: unknown packet flags %#x", ErrProtocol, uint8(h.Flags))
	case h.Heartbeat() && (h.DataLen != 0 || h.Seqno != HeartbeatSeqno || h.Last()):
		return fmt.Errorf("%w: heartbeat packet with data, last flag or seqno %d", ErrProtocol, h.Seqno)
	case !h.Heartbeat() && h.Seqno < 0:
		return fmt.Errorf("%w: negative packet seqno %d", ErrProtocol, h.Seqno)
	}
	return nil
}

// DecodePacketHeader decodes and validates a packet header.
func DecodePacketHeader(b []byte) (PacketHeader, error) {
	if len(b) < PacketHeaderLen {
		return PacketHeader{}, fmt.Errorf("%w: packet header of %d bytes", ErrProtocol, len(b))
	}
	h := PacketHeader{
		DataLen:          binary.BigEndian.Uint32(b[0:]),
		Offset:           int64(binary.BigEndian.Uint64(b[4:])),
		Seqno:            int64(binary.BigEndian.Uint64(b[12:])),
		Flags:            Flags(b[20]),
		BytesPerChecksum: binary.BigEndian.Uint32(b[21:]),
	}
	return h, h.Validate()
}

// Packet is one packet in a pooled buffer laid out as on the wire: header,
// checksums, data. Build one with NewPacket, fill its data, Seal it and write
// Wire(); or get one from a PacketReader. Release it when done: its memory
// is reused, so no slice obtained from it may be used afterwards.
//
// The pools hold buffers, not Packets: every Packet is a new small struct
// whose released mark stays set, so a second Release, or a Seal or Wire
// after Release, panics instead of silently touching a buffer that another
// packet may already own.
type Packet struct {
	Header PacketHeader

	buf      []byte
	pbuf     *[]byte // the pooled buffer buf came from; nil if not pooled
	start    int     // first wire byte (the header) in buf
	dataOff  int     // first data byte in buf
	dataCap  int
	class    int    // pool class of buf, -1 if not pooled
	unclaim  func() // gives buf's bytes back to a PacketReader's Claim
	released bool
}

// errReleased is the panic value of a Packet used after Release.
const errReleased = "datatransfer: packet used after Release"

func (p *Packet) live() {
	if p.released {
		panic(errReleased)
	}
}

// NewPacket returns an empty packet whose data can grow to dataCap bytes,
// checksummed in bpc-byte chunks. Its buffer comes from a pool.
func NewPacket(dataCap, bpc int) *Packet {
	if dataCap < 0 || dataCap > MaxPacketDataLen || bpc < MinBytesPerChecksum || bpc > MaxBytesPerChecksum {
		panic(fmt.Sprintf("datatransfer: NewPacket(%d, %d) out of range", dataCap, bpc))
	}
	sums := ChunkCount(dataCap, bpc) * ChecksumSize
	p := getPacket(PacketHeaderLen + sums + dataCap)
	p.Header = PacketHeader{BytesPerChecksum: uint32(bpc)}
	p.dataOff = PacketHeaderLen + sums
	p.start = 0
	p.dataCap = dataCap
	return p
}

// Data is the packet's payload.
func (p *Packet) Data() []byte { return p.buf[p.dataOff : p.dataOff+int(p.Header.DataLen)] }

// Checksums is the packet's checksum section (valid after Seal or on a
// received packet).
func (p *Packet) Checksums() []byte {
	return p.buf[p.dataOff-p.Header.ChecksumLen() : p.dataOff]
}

// Wire is the whole encoded packet (valid after Seal or on a received packet).
func (p *Packet) Wire() []byte {
	p.live()
	return p.buf[p.start : p.dataOff+int(p.Header.DataLen)]
}

// Free is how many more data bytes fit.
func (p *Packet) Free() int { return p.dataCap - int(p.Header.DataLen) }

// Append copies as much of b as fits into the data and returns how much.
func (p *Packet) Append(b []byte) int {
	n := copy(p.buf[p.dataOff+int(p.Header.DataLen):p.dataOff+p.dataCap], b)
	p.Header.DataLen += uint32(n)
	return n
}

// DataBuffer is the whole data region (capacity, not length), to be filled
// in place, e.g. by io.ReadFull, followed by SetDataLen.
func (p *Packet) DataBuffer() []byte { return p.buf[p.dataOff : p.dataOff+p.dataCap] }

// SetDataLen sets the data length after filling DataBuffer.
func (p *Packet) SetDataLen(n int) {
	if n < 0 || n > p.dataCap {
		panic(fmt.Sprintf("datatransfer: SetDataLen(%d) beyond capacity %d", n, p.dataCap))
	}
	p.Header.DataLen = uint32(n)
}

// Seal fills in the header and computes the checksums of the data, making
// Wire valid. The checksum section is placed right before the data, so no
// data byte moves.
func (p *Packet) Seal(offset, seqno int64, flags Flags) {
	p.live()
	p.Header.Offset, p.Header.Seqno, p.Header.Flags = offset, seqno, flags
	sumOff := p.dataOff - p.Header.ChecksumLen()
	PutChecksums(p.buf[sumOff:p.dataOff], p.Data(), int(p.Header.BytesPerChecksum))
	p.start = sumOff - PacketHeaderLen
	p.Header.Put(p.buf[p.start:sumOff])
}

// Verify checks the data against the checksums; on a mismatch it returns a
// *ChecksumError naming the chunk's offset in the block.
func (p *Packet) Verify() error {
	sums, data, bpc := p.Checksums(), p.Data(), int(p.Header.BytesPerChecksum)
	i := VerifyChecksums(sums, data, bpc)
	if i < 0 {
		return nil
	}
	chunk := data[i*bpc : min((i+1)*bpc, len(data))]
	return &ChecksumError{
		Offset: p.Header.Offset + int64(i*bpc),
		Want:   binary.BigEndian.Uint32(sums[i*ChecksumSize:]),
		Got:    CRC32C(chunk),
	}
}

// Release returns the packet's buffer to the pool. The packet must not be
// used afterwards, and no slice obtained from it either: whoever releases a
// packet must know every reader of its bytes is done (a Write given Wire()
// may read it until it returns). A second Release panics.
func (p *Packet) Release() {
	if p == nil {
		return
	}
	if p.released {
		panic("datatransfer: packet released twice")
	}
	p.released = true
	if p.unclaim != nil {
		p.unclaim()
		p.unclaim = nil
	}
	pb := p.pbuf
	p.buf, p.pbuf = nil, nil
	if pb != nil {
		pools[p.class].Put(pb)
	}
}

// PacketReader reads packets from a stream. Give it a bufio.Reader with a
// small buffer (4-16 KiB): headers and acks come out of the buffer, while a
// packet body larger than the buffer is read straight into the packet (bufio
// bypasses a drained buffer for large reads), one copy from the kernel. A
// buffer as large as a packet would copy most bodies twice.
type PacketReader struct {
	r   io.Reader
	hdr [PacketHeaderLen]byte

	// MaxDataLen, if > 0, lowers the accepted data length below
	// MaxPacketDataLen, so a peer cannot make us allocate more.
	MaxDataLen int
	// BytesPerChecksum, if > 0, is the only chunk size accepted.
	BytesPerChecksum int
	// Claim, if set, is asked for a packet's buffer (n bytes, as held in
	// memory) after its header passed every check and before the buffer is
	// allocated. It returns how to give the bytes back, which Release
	// calls, or an error that Next returns: a datanode refuses a packet
	// rather than hold more memory than its budget.
	Claim func(n int) (unclaim func(), err error)
}

// NewPacketReader returns a reader of packets from r.
func NewPacketReader(r io.Reader) *PacketReader { return &PacketReader{r: r} }

// Next reads one packet. It returns io.EOF only if the stream ended cleanly
// before a packet; it does not verify checksums (see Packet.Verify).
func (pr *PacketReader) Next() (*Packet, error) {
	if _, err := io.ReadFull(pr.r, pr.hdr[:]); err != nil {
		return nil, err
	}
	h, err := DecodePacketHeader(pr.hdr[:])
	if err != nil {
		return nil, err
	}
	if pr.MaxDataLen > 0 && int(h.DataLen) > pr.MaxDataLen {
		return nil, fmt.Errorf("%w: packet data length %d exceeds %d", ErrProtocol, h.DataLen, pr.MaxDataLen)
	}
	if pr.BytesPerChecksum > 0 && int(h.BytesPerChecksum) != pr.BytesPerChecksum {
		return nil, fmt.Errorf("%w: packet checksum chunk %d, expected %d", ErrProtocol, h.BytesPerChecksum, pr.BytesPerChecksum)
	}
	sums := h.ChecksumLen()
	n := PacketHeaderLen + sums + int(h.DataLen)
	var unclaim func()
	if pr.Claim != nil {
		if unclaim, err = pr.Claim(BufferSize(n)); err != nil {
			return nil, err
		}
	}
	p := getPacket(n)
	p.unclaim = unclaim
	p.Header = h
	p.start = 0
	p.dataOff = PacketHeaderLen + sums
	p.dataCap = int(h.DataLen)
	copy(p.buf, pr.hdr[:])
	if _, err := io.ReadFull(pr.r, p.buf[PacketHeaderLen:p.dataOff+int(h.DataLen)]); err != nil {
		p.Release()
		return nil, unexpectedEOF(err)
	}
	return p, nil
}

// Buffer pools. The default packet (64 KiB of data in 512-byte chunks) has
// a class of its own so that the common case wastes nothing; other sizes go
// to power-of-two classes.
const (
	defaultPacketBufLen = PacketHeaderLen + DefaultPacketDataLen/DefaultBytesPerChecksum*ChecksumSize + DefaultPacketDataLen
	defaultClass        = 0
	maxPooledShift      = 27 // larger buffers (only from odd peers) are not kept
)

var pools [maxPooledShift + 1]sync.Pool

// BufferSize is the memory a packet of n wire bytes holds: the size of
// the pooled buffer it gets.
func BufferSize(n int) int {
	_, size := poolClass(n)
	return size
}

// poolClass is the pool class and buffer size for n bytes; class -1 for
// buffers too large to pool.
func poolClass(n int) (class, size int) {
	if n == defaultPacketBufLen {
		return defaultClass, defaultPacketBufLen
	}
	shift := max(bits.Len(uint(n-1)), 12)
	if shift > maxPooledShift {
		return -1, n
	}
	return shift, 1 << shift
}

func getPacket(n int) *Packet {
	class, size := poolClass(n)
	if class < 0 {
		return &Packet{buf: make([]byte, n), class: -1}
	}
	pb, _ := pools[class].Get().(*[]byte)
	if pb == nil {
		b := make([]byte, size)
		pb = &b
	}
	return &Packet{buf: *pb, pbuf: pb, class: class}
}
