// Command git-ideate-symbols is git ideate's optional tree-sitter reader:
// it reads the definitions of Python, JavaScript, TypeScript and Rust
// files for the symbol index (internal/symbols), one request per line on
// stdin, one reply per line on stdout, until stdin ends. It is built with
// cgo (tree-sitter's grammars are C) and shipped beside git-ideate, which
// stays pure Go and falls back to a weaker reader without it.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/ideate/git-ideate/internal/symbols"
	"github.com/ideate/git-ideate/internal/version"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		fmt.Printf("%s %s (protocol %d)\n", symbols.HelperName, version.Version, symbols.HelperProtocol)
		return
	}
	if len(os.Args) > 1 {
		fmt.Fprintf(os.Stderr, "%s: takes no arguments; git-ideate runs it and talks to it on stdin and stdout\n", symbols.HelperName)
		os.Exit(2)
	}
	os.Exit(serve(os.Stdin, os.Stdout))
}

// serve answers each request line of in with one reply line on out; a
// line that is not a request ends it with status 1.
func serve(in *os.File, out *os.File) int {
	sc := symbols.NewHelperScanner(in)
	w := bufio.NewWriter(out)
	for sc.Scan() {
		var req symbols.HelperRequest
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			fmt.Fprintf(os.Stderr, "%s: a request that is not JSON: %v\n", symbols.HelperName, err)
			return 1
		}
		b, err := json.Marshal(readDefs(req))
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", symbols.HelperName, err)
			return 1
		}
		w.Write(append(b, '\n'))
		if err := w.Flush(); err != nil {
			return 1
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", symbols.HelperName, err)
		return 1
	}
	return 0
}
