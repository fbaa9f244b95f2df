//go:build linux

// Command createprobe times what a small write costs the file system,
// with no git work: each round creates three files (create, write 1,200
// bytes, close, rename into place) and deletes the previous round's three,
// once by creating each file and once by renaming a spare made ahead by a
// background goroutine (osproc.RenameNoReplace, as the MCP server's
// spares; Linux only). The two ways take turns round by round in sibling
// directories, so both see the same file system at the same moment.
//
//	go run ./bench/createprobe -dir /tmp -rounds 2000
//
// On ext4 the cost of a create depends on what was deleted lately near
// the directory (docs/ARCHITECTURE.md, "The file system is the floor of a
// write"): run it before and after a benchmark to see the region change.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ideate/git-ideate/bench/internal/benchutil"
	"github.com/ideate/git-ideate/internal/osproc"
)

func main() {
	dir := flag.String("dir", os.TempDir(), "where to make the probe's directory")
	rounds := flag.Int("rounds", 2000, "rounds per way")
	every := flag.Int("every", 500, "print medians every this many rounds")
	flag.Parse()
	root, err := os.MkdirTemp(*dir, "createprobe-")
	must(err)
	defer os.RemoveAll(root)
	create, spare, pool := filepath.Join(root, "create"), filepath.Join(root, "spare"), filepath.Join(root, "pool")
	for _, d := range []string{create, spare, pool} {
		must(os.Mkdir(d, 0o755))
	}
	spares := make(chan string, 64)
	stop := make(chan struct{})
	go func() {
		for i := 0; ; i++ {
			p := filepath.Join(pool, fmt.Sprintf("s%d", i))
			f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
			must(err)
			f.Close()
			select {
			case spares <- p:
			case <-stop:
				return
			}
		}
	}()
	defer close(stop)
	data := make([]byte, 1200)
	var prevC, prevS []string
	var dc, ds []time.Duration
	fmt.Printf("createprobe: %s in %s (3 files a round, the previous round's 3 deleted)\n", time.Now().UTC().Format(time.RFC3339), root)
	fmt.Printf("%8s %14s %14s\n", "rounds", "create", "spare")
	for i := 0; i < *rounds; i++ {
		t0 := time.Now()
		var made []string
		for k := 0; k < 3; k++ {
			f, err := os.CreateTemp(create, "tmp_")
			must(err)
			_, err = f.Write(data)
			must(err)
			must(f.Close())
			name := filepath.Join(create, fmt.Sprintf("f%d-%d", i, k))
			must(os.Rename(f.Name(), name))
			made = append(made, name)
		}
		for _, p := range prevC {
			must(os.Remove(p))
		}
		prevC = made
		dc = append(dc, time.Since(t0))

		t0 = time.Now()
		made = nil
		for k := 0; k < 3; k++ {
			p := <-spares
			lock := filepath.Join(spare, fmt.Sprintf("f%d-%d.lock", i, k))
			must(osproc.RenameNoReplace(p, lock))
			f, err := os.OpenFile(lock, os.O_WRONLY, 0)
			must(err)
			_, err = f.Write(data)
			must(err)
			must(f.Close())
			name := filepath.Join(spare, fmt.Sprintf("f%d-%d", i, k))
			must(os.Rename(lock, name))
			made = append(made, name)
		}
		for _, p := range prevS {
			must(os.Remove(p))
		}
		prevS = made
		ds = append(ds, time.Since(t0))
		if (i+1)%*every == 0 || i+1 == *rounds {
			lo := len(dc) - *every
			if lo < 0 {
				lo = 0
			}
			fmt.Printf("%8d %14v %14v\n", i+1, benchutil.Median(dc[lo:]).Round(time.Microsecond), benchutil.Median(ds[lo:]).Round(time.Microsecond))
		}
	}
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "createprobe:", err)
		os.Exit(1)
	}
}
