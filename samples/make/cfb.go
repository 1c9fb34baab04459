package main

import (
	"bytes"
	"encoding/binary"
	"unicode/utf16"
)

// cfbStream is one stream of a Compound File Binary container.
type cfbStream struct {
	name string
	data []byte
}

// compoundFile writes a minimal version-3 Compound File Binary container
// (MS-CFB): 512-byte sectors, one FAT sector, one directory sector, every
// stream padded to whole sectors (at least 4096 bytes, so none belongs in
// the mini stream). Enough for readers that look at the directory, which
// is all the samples need.
func compoundFile(streams []cfbStream) []byte {
	const (
		sector     = 512
		endOfChain = 0xFFFFFFFE
		freeSect   = 0xFFFFFFFF
		fatSect    = 0xFFFFFFFD
		noStream   = 0xFFFFFFFF
	)
	le := binary.LittleEndian
	for i := range streams {
		if n := len(streams[i].data); n < 4096 {
			streams[i].data = append(streams[i].data, make([]byte, 4096-n)...)
		}
	}
	// Sector map: 0 FAT, 1 directory, then each stream's sectors in turn.
	fat := []uint32{fatSect, endOfChain}
	starts := make([]uint32, len(streams))
	for i, s := range streams {
		n := (len(s.data) + sector - 1) / sector
		starts[i] = uint32(len(fat))
		for j := range n {
			if j == n-1 {
				fat = append(fat, endOfChain)
			} else {
				fat = append(fat, uint32(len(fat)+1))
			}
		}
	}
	if len(fat) > sector/4 || len(streams) > 3 {
		panic("compoundFile: sample too large for one FAT or directory sector")
	}

	var hdr [sector]byte
	copy(hdr[:], []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1})
	le.PutUint16(hdr[0x18:], 0x003E)
	le.PutUint16(hdr[0x1A:], 0x0003)
	le.PutUint16(hdr[0x1C:], 0xFFFE)
	le.PutUint16(hdr[0x1E:], 9)
	le.PutUint16(hdr[0x20:], 6)
	le.PutUint32(hdr[0x2C:], 1) // FAT sectors
	le.PutUint32(hdr[0x30:], 1) // first directory sector
	le.PutUint32(hdr[0x38:], 4096)
	le.PutUint32(hdr[0x3C:], endOfChain)
	le.PutUint32(hdr[0x44:], endOfChain)
	for i := range 109 {
		le.PutUint32(hdr[0x4C+4*i:], freeSect)
	}
	le.PutUint32(hdr[0x4C:], 0)

	var fatSector [sector]byte
	for i := range sector / 4 {
		v := uint32(freeSect)
		if i < len(fat) {
			v = fat[i]
		}
		le.PutUint32(fatSector[4*i:], v)
	}

	var dir [sector]byte
	entry := func(i int, name string, typ byte, left, right, child, start uint32, size uint64) {
		e := dir[i*128 : (i+1)*128]
		u := utf16.Encode([]rune(name))
		for j, c := range u {
			le.PutUint16(e[2*j:], c)
		}
		le.PutUint16(e[0x40:], uint16(2*len(u)+2))
		e[0x42] = typ
		e[0x43] = 1 // black
		le.PutUint32(e[0x44:], left)
		le.PutUint32(e[0x48:], right)
		le.PutUint32(e[0x4C:], child)
		le.PutUint32(e[0x74:], start)
		le.PutUint64(e[0x78:], size)
	}
	for i := range 4 {
		le.PutUint32(dir[i*128+0x44:], noStream)
		le.PutUint32(dir[i*128+0x48:], noStream)
		le.PutUint32(dir[i*128+0x4C:], noStream)
	}
	entry(0, "Root Entry", 5, noStream, noStream, 1, endOfChain, 0)
	for i, s := range streams {
		right := uint32(noStream)
		if i+1 < len(streams) {
			right = uint32(i + 2) // siblings chained to the right
		}
		entry(i+1, s.name, 2, noStream, right, noStream, starts[i], uint64(len(s.data)))
	}

	var b bytes.Buffer
	b.Write(hdr[:])
	b.Write(fatSector[:])
	b.Write(dir[:])
	for _, s := range streams {
		b.Write(s.data)
		if pad := len(s.data) % sector; pad != 0 {
			b.Write(make([]byte, sector-pad))
		}
	}
	return b.Bytes()
}
