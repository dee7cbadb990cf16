package blocktoken

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"sync"
	"time"

	"smarth/internal/rpc/dfspb"
)

// Defaults as HDFS: a token lives 10 hours, keys roll every hour.
const (
	DefaultLifetime = 10 * time.Hour
	DefaultRoll     = time.Hour
)

// Key is one block key.
type Key struct {
	ID     uint32
	Expiry time.Time
	Secret []byte
}

// Manager is the namenode's half: it holds the rolling key set and signs
// tokens. Keys are rolled HDFS-style with a "next" key shipped one roll
// ahead, so that by the time the namenode signs with a key every datanode
// that heartbeated in the last roll interval already has it.
type Manager struct {
	lifetime, roll time.Duration
	rand           io.Reader

	mu       sync.Mutex // guards the fields below
	keys     map[uint32]Key
	current  uint32
	next     uint32
	lastID   uint32
	serial   uint64 // bumped on every change of the key set
	nextRoll time.Time
}

// NewManager creates a key set (current and next keys) at now. lifetime
// and roll of 0 take the defaults; random may be nil (crypto/rand).
func NewManager(lifetime, roll time.Duration, random io.Reader, now time.Time) (*Manager, error) {
	if lifetime <= 0 {
		lifetime = DefaultLifetime
	}
	if roll <= 0 {
		roll = DefaultRoll
	}
	if random == nil {
		random = rand.Reader
	}
	m := &Manager{lifetime: lifetime, roll: roll, rand: random, keys: map[uint32]Key{}}
	var seed [4]byte
	if _, err := io.ReadFull(random, seed[:]); err != nil {
		return nil, fmt.Errorf("blocktoken: random key id: %w", err)
	}
	// A random first id, so that tokens of a namenode before a restart do
	// not name the ids of the new set.
	m.lastID = uint32(seed[0])<<24 | uint32(seed[1])<<16 | uint32(seed[2])<<8 | uint32(seed[3])
	var err error
	if m.current, err = m.newKeyLocked(now); err != nil {
		return nil, err
	}
	if m.next, err = m.newKeyLocked(now.Add(roll)); err != nil {
		return nil, err
	}
	m.nextRoll = now.Add(roll)
	m.serial = 1
	return m, nil
}

// newKeyLocked makes a key that is current from `from` on: it must outlive
// a roll interval of use, a roll of being the previous key, and the
// lifetime of the last token signed with it.
func (m *Manager) newKeyLocked(from time.Time) (uint32, error) {
	secret := make([]byte, 32)
	if _, err := io.ReadFull(m.rand, secret); err != nil {
		return 0, fmt.Errorf("blocktoken: new key: %w", err)
	}
	m.lastID++
	m.keys[m.lastID] = Key{ID: m.lastID, Expiry: from.Add(2*m.roll + m.lifetime), Secret: secret}
	return m.lastID, nil
}

// Roll makes the next key current and creates a new next key once the
// roll interval has passed, and forgets expired keys. It reports whether
// the key set changed.
func (m *Manager) Roll(now time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if now.Before(m.nextRoll) {
		return false, nil
	}
	next, err := m.newKeyLocked(now.Add(m.roll))
	if err != nil {
		return false, err
	}
	m.current, m.next = m.next, next
	m.nextRoll = now.Add(m.roll)
	for id, k := range m.keys {
		if now.After(k.Expiry) {
			delete(m.keys, id)
		}
	}
	m.serial++
	return true, nil
}

// Issue signs id with the current key; KeyID and ExpiryUnixMs are set
// here.
func (m *Manager) Issue(id Identifier, now time.Time) *dfspb.BlockToken {
	m.mu.Lock()
	k := m.keys[m.current]
	m.mu.Unlock()
	id.KeyID = k.ID
	id.ExpiryUnixMs = now.Add(m.lifetime).UnixMilli()
	ident := id.Marshal()
	return &dfspb.BlockToken{Identifier: ident, Password: sign(k.Secret, ident)}
}

// Export is the key set for datanodes, and its serial.
func (m *Manager) Export() (*dfspb.ExportedBlockKeys, uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := &dfspb.ExportedBlockKeys{Enabled: true, CurrentKeyId: m.current}
	for _, k := range m.keys {
		out.Keys = append(out.Keys, &dfspb.BlockKey{KeyId: k.ID, ExpiryUnixMs: k.Expiry.UnixMilli(), Secret: k.Secret})
	}
	return out, m.serial
}

// Serial is the current key set's serial.
func (m *Manager) Serial() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.serial
}

func sign(secret, ident []byte) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write(ident)
	return h.Sum(nil)
}
