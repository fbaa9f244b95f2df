package gitstore

import (
	"bytes"
	"encoding/binary"
	"hash/adler32"
	"math/bits"
)

// appendDeflated appends data to buf as a zlib stream (RFC 1950) holding
// one deflate block (RFC 1951) of fixed Huffman codes, matched greedily
// against the last 32 KiB with a small hash table; or, when that comes out
// no shorter, one stored block. It is the compression of a write's pack.
//
// compress/flate sets up about a megabyte of state per writer, even at
// BestSpeed (its hash chains live in the compressor whatever the level): a
// process's first compressed object (770 bytes) took 0.29–0.32 ms on this
// machine, where a warm writer deflates a record blob in about 20 µs (see
// storeInPack): the rest is that setup, and a CLI write compresses
// one or two small objects and exits. This one keeps a 16 KiB table on the
// stack. Fixed codes deflate JSON somewhat less than flate's own tables
// do; the roll-ups and git's repacks store most objects as deltas, which
// git deflates anew.
func appendDeflated(buf *bytes.Buffer, data []byte) {
	start := buf.Len()
	buf.Write([]byte{0x78, 0x01}) // deflate, 32 KiB window, fastest; (0x7801 % 31 == 0)
	w := bitWriter{buf: buf}
	w.put(0b011, 3)                // BFINAL, then BTYPE 01: fixed codes (read lowest bit first)
	var table [1 << hashBits]int32 // a position + 1 per hash of four bytes; 0: none
	lit := 0                       // the first byte not yet written
	for i := 0; i+4 <= len(data); {
		v := binary.LittleEndian.Uint32(data[i:])
		h := (v * 0x9e3779b1) >> (32 - hashBits)
		cand := int(table[h]) - 1
		table[h] = int32(i + 1)
		if cand < 0 || i-cand > maxDistance || binary.LittleEndian.Uint32(data[cand:]) != v {
			i++
			continue
		}
		n := 4
		for i+n < len(data) && n < maxMatch && data[cand+n] == data[i+n] {
			n++
		}
		for ; lit < i; lit++ {
			w.literal(int(data[lit]))
		}
		w.match(n, i-cand)
		i += n
		lit = i
	}
	for ; lit < len(data); lit++ {
		w.literal(int(data[lit]))
	}
	w.literal(256) // end of block
	w.flush()
	if buf.Len()-start > len(data)+7 && len(data) <= maxStoredBlock {
		buf.Truncate(start)
		appendStored(buf, data) // incompressible: stored is shorter
		return
	}
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], adler32.Checksum(data))
	buf.Write(sum[:])
}

const (
	hashBits    = 12
	maxDistance = 32768
	maxMatch    = 258
)

// Deflate's length and distance codes: each code's least value and the
// extra bits after it (RFC 1951, 3.2.5).
var (
	lengthBase  = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase    = [30]uint16{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra   = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
)

// bitWriter packs bits into bytes lowest first, as deflate reads them.
type bitWriter struct {
	buf *bytes.Buffer
	acc uint64
	n   uint
}

func (w *bitWriter) put(v uint64, n uint) {
	w.acc |= v << w.n
	w.n += n
	for w.n >= 8 {
		w.buf.WriteByte(byte(w.acc))
		w.acc >>= 8
		w.n -= 8
	}
}

// code writes a Huffman code of n bits, which deflate stores from its
// most significant bit.
func (w *bitWriter) code(c uint16, n uint) {
	w.put(uint64(bits.Reverse16(c)>>(16-n)), n)
}

// literal writes symbol v (0–287) of the fixed literal/length code.
func (w *bitWriter) literal(v int) {
	switch {
	case v < 144:
		w.code(uint16(0x30+v), 8)
	case v < 256:
		w.code(uint16(0x190+v-144), 9)
	case v < 280:
		w.code(uint16(v-256), 7)
	default:
		w.code(uint16(0xc0+v-280), 8)
	}
}

// match writes a copy of n bytes (4–258) from dist bytes back (1–32768).
func (w *bitWriter) match(n, dist int) {
	i := len(lengthBase) - 1
	for int(lengthBase[i]) > n {
		i--
	}
	w.literal(257 + i)
	w.put(uint64(n-int(lengthBase[i])), uint(lengthExtra[i]))
	j := len(distBase) - 1
	for int(distBase[j]) > dist {
		j--
	}
	w.code(uint16(j), 5)
	w.put(uint64(dist-int(distBase[j])), uint(distExtra[j]))
}

// flush writes the last partial byte, padded with zero bits.
func (w *bitWriter) flush() {
	if w.n > 0 {
		w.buf.WriteByte(byte(w.acc))
	}
	w.acc, w.n = 0, 0
}

// deflateBelow is the size from which a pack's object goes through
// compress/zlib instead: flate's own Huffman tables make text a quarter
// shorter than fixed codes do (a 27 KB document: 12.7 KB at BestSpeed,
// 16.4 KB here), where on a 559-byte item they save 40 bytes (308 against
// 348) and cost the setup above.
const deflateBelow = 16 << 10
