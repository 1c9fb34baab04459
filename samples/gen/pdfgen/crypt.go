package pdfgen

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/md5"
	"crypto/rc4"
	"fmt"
	"math/rand/v2"
)

// Method is a standard security handler encryption method.
type Method int

const (
	RC4_40  Method = iota + 1 // V1 R2, 40-bit RC4
	RC4_128                   // V2 R3, 128-bit RC4
	AES_128                   // V4 R4, AESV2 crypt filter
)

func (m Method) String() string {
	switch m {
	case RC4_40:
		return "RC4-40"
	case RC4_128:
		return "RC4-128"
	case AES_128:
		return "AES-128"
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// Encryption configures the standard security handler. An empty
// UserPassword gives a file every reader opens without asking.
type Encryption struct {
	Method        Method
	UserPassword  string
	OwnerPassword string // defaults to "owner"
}

// padding is the 32-byte password padding string of the PDF standard
// security handler.
var padding = []byte{
	0x28, 0xBF, 0x4E, 0x5E, 0x4E, 0x75, 0x8A, 0x41, 0x64, 0x00, 0x4E, 0x56, 0xFF, 0xFA, 0x01, 0x08,
	0x2E, 0x2E, 0x00, 0xB6, 0xD0, 0x68, 0x3E, 0x80, 0x2F, 0x0C, 0xA9, 0xFE, 0x64, 0x53, 0x69, 0x7A,
}

// permissions allows everything (bits 1 and 2 must be zero).
const permissions int32 = -4

func padPassword(pw string) []byte {
	out := make([]byte, 0, 32)
	out = append(out, pw...)
	if len(out) > 32 {
		out = out[:32]
	}
	return append(out, padding[:32-len(out)]...)
}

// encrypter holds the file key and encrypts per object.
type encrypter struct {
	method Method
	key    []byte
	o, u   []byte
	rev, v int
	rng    *rand.Rand
}

func newEncrypter(e Encryption, id []byte, rng *rand.Rand) (*encrypter, error) {
	enc := &encrypter{method: e.Method, rng: rng}
	n := 16
	switch e.Method {
	case RC4_40:
		enc.rev, enc.v, n = 2, 1, 5
	case RC4_128:
		enc.rev, enc.v = 3, 2
	case AES_128:
		enc.rev, enc.v = 4, 4
	default:
		return nil, fmt.Errorf("pdfgen: unknown encryption method %v", e.Method)
	}
	owner := e.OwnerPassword
	if owner == "" {
		owner = "owner"
	}

	// Owner entry: the padded user password encrypted with a key derived
	// from the owner password.
	h := md5.Sum(padPassword(owner))
	okey := h[:]
	if enc.rev >= 3 {
		for range 50 {
			s := md5.Sum(okey[:n])
			okey = s[:]
		}
	}
	okey = okey[:n]
	enc.o = padPassword(e.UserPassword)
	rc4xor(okey, enc.o)
	if enc.rev >= 3 {
		for i := 1; i <= 19; i++ {
			rc4xor(xorKey(okey, byte(i)), enc.o)
		}
	}

	// File key from the user password.
	m := md5.New()
	m.Write(padPassword(e.UserPassword))
	m.Write(enc.o)
	pv := permissions
	p := uint32(pv)
	m.Write([]byte{byte(p), byte(p >> 8), byte(p >> 16), byte(p >> 24)})
	m.Write(id)
	key := m.Sum(nil)
	if enc.rev >= 3 {
		for range 50 {
			s := md5.Sum(key[:n])
			key = s[:]
		}
	}
	enc.key = key[:n]

	// User entry: what a reader recomputes to check a password.
	if enc.rev == 2 {
		enc.u = append([]byte(nil), padding...)
		rc4xor(enc.key, enc.u)
	} else {
		m.Reset()
		m.Write(padding)
		m.Write(id)
		u := m.Sum(nil)
		rc4xor(enc.key, u)
		for i := 1; i <= 19; i++ {
			rc4xor(xorKey(enc.key, byte(i)), u)
		}
		enc.u = append(u, make([]byte, 16)...)
	}
	return enc, nil
}

func rc4xor(key, data []byte) {
	c, err := rc4.NewCipher(key)
	if err != nil {
		panic(err) // key lengths here are always 5..16 bytes
	}
	c.XORKeyStream(data, data)
}

func xorKey(key []byte, b byte) []byte {
	out := make([]byte, len(key))
	for i := range key {
		out[i] = key[i] ^ b
	}
	return out
}

// objectKey derives the per-object key (algorithm 1 of the standard).
func (e *encrypter) objectKey(num int) []byte {
	m := md5.New()
	m.Write(e.key)
	m.Write([]byte{byte(num), byte(num >> 8), byte(num >> 16), 0, 0})
	if e.method == AES_128 {
		m.Write([]byte("sAlT"))
	}
	k := m.Sum(nil)
	return k[:min(len(e.key)+5, 16)]
}

// encrypt returns data encrypted for object num.
func (e *encrypter) encrypt(num int, data []byte) []byte {
	key := e.objectKey(num)
	if e.method != AES_128 {
		out := append([]byte(nil), data...)
		rc4xor(key, out)
		return out
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		panic(err) // a 16-byte key always works
	}
	padLen := aes.BlockSize - len(data)%aes.BlockSize
	out := make([]byte, aes.BlockSize, aes.BlockSize+len(data)+padLen)
	for i := range aes.BlockSize {
		out[i] = byte(e.rng.UintN(256))
	}
	out = append(out, data...)
	for range padLen {
		out = append(out, byte(padLen))
	}
	cipher.NewCBCEncrypter(block, out[:aes.BlockSize]).CryptBlocks(out[aes.BlockSize:], out[aes.BlockSize:])
	return out
}

// dict returns the /Encrypt dictionary body.
func (e *encrypter) dict() string {
	switch e.method {
	case RC4_40:
		return fmt.Sprintf("<< /Filter /Standard /V 1 /R 2 /Length 40 /O <%x> /U <%x> /P %d >>", e.o, e.u, permissions)
	case RC4_128:
		return fmt.Sprintf("<< /Filter /Standard /V 2 /R 3 /Length 128 /O <%x> /U <%x> /P %d >>", e.o, e.u, permissions)
	}
	return fmt.Sprintf("<< /Filter /Standard /V 4 /R 4 /Length 128 "+
		"/CF << /StdCF << /CFM /AESV2 /AuthEvent /DocOpen /Length 16 >> >> /StmF /StdCF /StrF /StdCF "+
		"/O <%x> /U <%x> /P %d >>", e.o, e.u, permissions)
}
