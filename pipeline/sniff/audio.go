package sniff

import (
	"bytes"

	"github.com/docpipe/docpipe/pipeline/extract"
)

// audioFormat recognises the sound files docpipe transcribes by their
// magic bytes: RIFF....WAVE, fLaC, OggS, and MP3 behind an ID3v2 tag. An
// MP3 without a tag (starting at a frame header) is recognised by
// mpegFrameHeader once the bytes are known not to be text.
func audioFormat(head []byte) (extract.Format, bool) {
	switch {
	case len(head) >= 12 && bytes.Equal(head[:4], []byte("RIFF")) && bytes.Equal(head[8:12], []byte("WAVE")):
		return extract.FormatWAV, true
	case bytes.HasPrefix(head, []byte("fLaC")):
		return extract.FormatFLAC, true
	case bytes.HasPrefix(head, []byte("OggS")):
		return extract.FormatOGG, true
	case bytes.HasPrefix(head, []byte("ID3")):
		return extract.FormatMP3, true
	}
	return "", false
}

// mpegFrameHeader reports whether head starts with a plausible MPEG audio
// (layer I-III) frame header: 11 sync bits, then no reserved version,
// layer, bitrate or sample-rate value. ADTS AAC (layer 0) is not one, and
// neither is "free" bitrate (0), which no encoder in use writes and which
// a UTF-32 byte order mark (FF FE 00 00) would otherwise pass for.
func mpegFrameHeader(head []byte) bool {
	if len(head) < 4 || head[0] != 0xFF || head[1]&0xE0 != 0xE0 {
		return false
	}
	version := head[1] >> 3 & 0x3
	layer := head[1] >> 1 & 0x3
	bitrate := head[2] >> 4
	rate := head[2] >> 2 & 0x3
	return version != 1 && layer != 0 && bitrate != 0 && bitrate != 0xF && rate != 3
}
