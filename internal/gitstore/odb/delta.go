package odb

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// maxCopyLen is the largest number of bytes one delta copy instruction can
// produce (three size bytes); it bounds the declared result size.
const maxCopyLen = 0xffffff

var errDeltaTruncated = errors.New("delta: truncated instruction stream")

// applyDelta applies a git delta (as stored in OFS_DELTA and REF_DELTA pack
// entries) to base and returns the newly allocated result. Every size and
// offset is validated; malformed input yields an error, never a panic.
func applyDelta(base, delta []byte) ([]byte, error) {
	// The sizes are little-endian base-128, as binary.Uvarint reads them.
	srcSize, n := binary.Uvarint(delta)
	if n <= 0 {
		return nil, errors.New("delta: bad base size header")
	}
	if srcSize != uint64(len(base)) {
		return nil, fmt.Errorf("delta: base size mismatch: delta expects %d bytes, base has %d", srcSize, len(base))
	}
	dstSize, m := binary.Uvarint(delta[n:])
	if m <= 0 {
		return nil, errors.New("delta: bad result size header")
	}
	ops := delta[n+m:]
	if dstSize > uint64(len(ops))*maxCopyLen || dstSize > maxAlloc {
		return nil, fmt.Errorf("delta: result size %d impossible for %d instruction bytes", dstSize, len(ops))
	}
	// Preallocate the declared size unless it is wildly larger than what the
	// inputs plausibly expand to; a hostile header then cannot force a huge
	// allocation up front, and the result still grows only with real output.
	out := make([]byte, 0, int(min(dstSize, 4*(uint64(len(base))+uint64(len(ops)))+1<<20)))
	for i := 0; i < len(ops); {
		c := ops[i]
		i++
		switch {
		case c&0x80 != 0: // copy from base
			var arg [7]byte // the offset's 4 bytes, then the size's 3, each when its bit is set
			for b := range arg {
				if c&(1<<b) != 0 {
					if i >= len(ops) {
						return nil, errDeltaTruncated
					}
					arg[b] = ops[i]
					i++
				}
			}
			off := uint64(binary.LittleEndian.Uint32(arg[:4]))
			size := uint64(arg[4]) | uint64(arg[5])<<8 | uint64(arg[6])<<16
			if size == 0 {
				size = 0x10000
			}
			if off+size > uint64(len(base)) {
				return nil, fmt.Errorf("delta: copy of %d bytes at offset %d exceeds base of %d bytes", size, off, len(base))
			}
			if uint64(len(out))+size > dstSize {
				return nil, fmt.Errorf("delta: copy overflows declared result size %d", dstSize)
			}
			out = append(out, base[off:off+size]...)
		case c != 0: // insert literal bytes
			k := int(c)
			if k > len(ops)-i {
				return nil, errDeltaTruncated
			}
			if uint64(len(out)+k) > dstSize {
				return nil, fmt.Errorf("delta: insert overflows declared result size %d", dstSize)
			}
			out = append(out, ops[i:i+k]...)
			i += k
		default:
			return nil, errors.New("delta: reserved instruction 0")
		}
	}
	if uint64(len(out)) != dstSize {
		return nil, fmt.Errorf("delta: result has %d bytes, header declares %d", len(out), dstSize)
	}
	return out, nil
}
