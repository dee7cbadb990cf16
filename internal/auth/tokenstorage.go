package auth

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/encoding/protowire"

	"smarth/internal/atomicfile"
)

// Hadoop's token storage file (Credentials.writeTokenStorageFile), what
// `hdfs fetchdt` writes and Hadoop reads from HADOOP_TOKEN_FILE_LOCATION:
// "HDTS", a version byte, then the tokens. Hadoop 3.4 writes version 1, a
// length-delimited CredentialsProto, and reads that or the legacy version
// 0 (Writable): both are read here, version 1 is written.

var tokenStorageMagic = []byte("HDTS")

const (
	tokenStorageLegacy = 0
	tokenStorageProto  = 1
	// maxTokenStorage bounds a token file read (a token is ~200 bytes).
	maxTokenStorage = 1 << 20
)

// StoredToken is one entry of a token file: Hadoop keys each token by an
// alias (fetchdt uses its service).
type StoredToken struct {
	Alias string
	Token HadoopToken
}

// Field numbers of Hadoop's Security.proto messages.
const (
	credTokens    = 1 // CredentialsProto.tokens
	kvAlias       = 1 // CredentialsKVProto.alias
	kvToken       = 2 // CredentialsKVProto.token
	tokIdentifier = 1 // TokenProto.identifier
	tokPassword   = 2
	tokKind       = 3
	tokService    = 4
)

// MarshalTokenStorage is the file's bytes, version 1.
func MarshalTokenStorage(toks []StoredToken) []byte {
	var creds []byte
	for _, st := range toks {
		var tp []byte
		tp = protowire.AppendTag(tp, tokIdentifier, protowire.BytesType)
		tp = protowire.AppendBytes(tp, st.Token.Identifier)
		tp = protowire.AppendTag(tp, tokPassword, protowire.BytesType)
		tp = protowire.AppendBytes(tp, st.Token.Password)
		tp = protowire.AppendTag(tp, tokKind, protowire.BytesType)
		tp = protowire.AppendString(tp, st.Token.Kind)
		tp = protowire.AppendTag(tp, tokService, protowire.BytesType)
		tp = protowire.AppendString(tp, st.Token.Service)
		var kv []byte
		kv = protowire.AppendTag(kv, kvAlias, protowire.BytesType)
		kv = protowire.AppendString(kv, st.Alias)
		kv = protowire.AppendTag(kv, kvToken, protowire.BytesType)
		kv = protowire.AppendBytes(kv, tp)
		creds = protowire.AppendTag(creds, credTokens, protowire.BytesType)
		creds = protowire.AppendBytes(creds, kv)
	}
	b := append(bytes.Clone(tokenStorageMagic), tokenStorageProto)
	return protowire.AppendBytes(b, creds) // writeDelimitedTo: varint length, message
}

// ParseTokenStorage reads a token file of either version. Secret keys
// (which fetchdt never writes) are skipped.
func ParseTokenStorage(b []byte) ([]StoredToken, error) {
	if len(b) < len(tokenStorageMagic)+1 || !bytes.Equal(b[:len(tokenStorageMagic)], tokenStorageMagic) {
		return nil, fmt.Errorf("Bad header found in token storage.")
	}
	switch v := b[len(tokenStorageMagic)]; v {
	case tokenStorageLegacy:
		return parseLegacyStorage(b[len(tokenStorageMagic)+1:])
	case tokenStorageProto:
		msg, n := protowire.ConsumeBytes(b[len(tokenStorageMagic)+1:])
		if n < 0 {
			return nil, fmt.Errorf("token storage: %v", protowire.ParseError(n))
		}
		return parseCredentialsProto(msg)
	default:
		return nil, fmt.Errorf("Unknown version %d in token storage.", v)
	}
}

func parseLegacyStorage(b []byte) ([]StoredToken, error) {
	r := &writableReader{b: b}
	n := r.vlong()
	var toks []StoredToken
	// Each entry takes at least 5 bytes, so a count beyond what is left
	// is refused before anything is allocated for it.
	if n < 0 || n > int64(len(b)) {
		return nil, fmt.Errorf("token storage: %d tokens in %d bytes", n, len(b))
	}
	for i := int64(0); i < n && r.err == nil; i++ {
		alias := string(r.bytes(maxNameLen))
		toks = append(toks, StoredToken{Alias: alias, Token: readHadoopToken(r)})
	}
	secrets := r.vlong()
	for i := int64(0); i < secrets && r.err == nil; i++ {
		r.bytes(maxNameLen)
		r.bytes(maxTokenStorage)
	}
	if err := r.done(); err != nil {
		return nil, fmt.Errorf("token storage: %v", err)
	}
	return toks, nil
}

// parseCredentialsProto reads CredentialsProto, skipping fields it does
// not know as protobuf does.
func parseCredentialsProto(b []byte) ([]StoredToken, error) {
	var toks []StoredToken
	err := eachField(b, func(num protowire.Number, v []byte) error {
		if num != credTokens {
			return nil
		}
		var st StoredToken
		err := eachField(v, func(num protowire.Number, v []byte) error {
			switch num {
			case kvAlias:
				st.Alias = string(v)
			case kvToken:
				return eachField(v, func(num protowire.Number, v []byte) error {
					switch num {
					case tokIdentifier:
						st.Token.Identifier = v
					case tokPassword:
						st.Token.Password = v
					case tokKind:
						st.Token.Kind = string(v)
					case tokService:
						st.Token.Service = string(v)
					}
					return nil
				})
			}
			return nil
		})
		toks = append(toks, st)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("token storage: %w", err)
	}
	return toks, nil
}

// eachField calls fn with each length-delimited field of a message and
// skips the others.
func eachField(b []byte, fn func(protowire.Number, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		if err := fn(num, v); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// WriteTokenStorageFile writes a token file readable by its owner only:
// whoever reads it can act as the tokens' owner until they expire.
func WriteTokenStorageFile(path string, toks []StoredToken) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(path, MarshalTokenStorage(toks), 0o600)
}

// ReadTokenStorageFile reads a token file of either version, at most
// maxTokenStorage bytes of it.
func ReadTokenStorageFile(path string) ([]StoredToken, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxTokenStorage+1))
	if err != nil {
		return nil, fmt.Errorf("Exception reading %s: %w", path, err)
	}
	if len(b) > maxTokenStorage {
		return nil, fmt.Errorf("Exception reading %s: longer than %d bytes", path, maxTokenStorage)
	}
	toks, err := ParseTokenStorage(b)
	if err != nil {
		return nil, fmt.Errorf("Exception reading %s: %w", path, err)
	}
	return toks, nil
}
