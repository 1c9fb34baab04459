package sniff

import (
	"encoding/binary"
	"errors"
	"io"
	"unicode/utf16"
)

// cfbMagic starts an OLE2 Compound File Binary container: legacy Office
// files (.doc, .xls, .ppt) and password-protected OOXML files, whose
// encrypted package is stored in one.
var cfbMagic = []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}

const (
	cfbEndOfChain = 0xFFFFFFFE
	cfbFreeSect   = 0xFFFFFFFF
	cfbMaxSectors = 1 << 22 // bound on chains and tables: a 2 GiB file with 512-byte sectors
	cfbMaxEntries = 1 << 16 // directory entries read at most
)

var errCFBCorrupt = errors.New("corrupt compound file")

// cfbEntryNames returns the names of the storage and stream entries of a
// Compound File Binary container, reading only its header, FAT and
// directory (MS-CFB 2.2–2.6). Every offset and chain is bounds-checked.
func cfbEntryNames(r io.ReaderAt, size int64) ([]string, error) {
	var hdr [512]byte
	if _, err := r.ReadAt(hdr[:], 0); err != nil {
		return nil, errCFBCorrupt
	}
	le := binary.LittleEndian
	shift := le.Uint16(hdr[0x1E:])
	if shift != 9 && shift != 12 {
		return nil, errCFBCorrupt
	}
	sectorSize := int64(1) << shift
	nSectors := (size - sectorSize + sectorSize - 1) / sectorSize
	if nSectors <= 0 || nSectors > cfbMaxSectors {
		return nil, errCFBCorrupt
	}
	readSector := func(id uint32, buf []byte) error {
		if int64(id) >= nSectors {
			return errCFBCorrupt
		}
		_, err := r.ReadAt(buf, (int64(id)+1)*sectorSize)
		if err != nil && !(errors.Is(err, io.EOF) && (int64(id)+2)*sectorSize > size) {
			return errCFBCorrupt
		}
		return nil
	}

	// The DIFAT lists the FAT's sectors: 109 entries in the header, the
	// rest in a chain of DIFAT sectors.
	var fatSectors []uint32
	for i := range 109 {
		if id := le.Uint32(hdr[0x4C+4*i:]); id != cfbFreeSect {
			fatSectors = append(fatSectors, id)
		}
	}
	buf := make([]byte, sectorSize)
	perSector := int(sectorSize / 4)
	next := le.Uint32(hdr[0x44:])
	for steps := 0; next != cfbEndOfChain && next != cfbFreeSect; steps++ {
		if steps > int(nSectors) {
			return nil, errCFBCorrupt
		}
		if err := readSector(next, buf); err != nil {
			return nil, err
		}
		for i := range perSector - 1 {
			if id := le.Uint32(buf[4*i:]); id != cfbFreeSect {
				fatSectors = append(fatSectors, id)
			}
		}
		next = le.Uint32(buf[4*(perSector-1):])
	}
	if len(fatSectors)*perSector > cfbMaxSectors {
		return nil, errCFBCorrupt
	}
	fat := make([]uint32, 0, len(fatSectors)*perSector)
	for _, id := range fatSectors {
		if err := readSector(id, buf); err != nil {
			return nil, err
		}
		for i := range perSector {
			fat = append(fat, le.Uint32(buf[4*i:]))
		}
	}

	var names []string
	id := le.Uint32(hdr[0x30:])
	for steps := 0; id != cfbEndOfChain; steps++ {
		if steps > len(fat) || int(id) >= len(fat) || len(names) > cfbMaxEntries {
			return nil, errCFBCorrupt
		}
		if err := readSector(id, buf); err != nil {
			return nil, err
		}
		for off := 0; off+128 <= len(buf); off += 128 {
			e := buf[off : off+128]
			typ := e[0x42]
			if typ != 1 && typ != 2 && typ != 5 { // storage, stream, root
				continue
			}
			nameLen := int(le.Uint16(e[0x40:]))
			if nameLen < 2 || nameLen > 64 || nameLen%2 != 0 {
				continue
			}
			u := make([]uint16, nameLen/2-1) // drop the terminating NUL
			for i := range u {
				u[i] = le.Uint16(e[2*i:])
			}
			names = append(names, string(utf16.Decode(u)))
		}
		id = fat[id]
	}
	return names, nil
}
