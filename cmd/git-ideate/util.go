package main

import (
	"bufio"
	"io"
	"os"
	"time"
)

var nowFunc = time.Now

func newBufWriter(w io.Writer) *bufio.Writer { return bufio.NewWriterSize(w, 64*1024) }

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
