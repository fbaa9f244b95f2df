package gitstore

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
)

// Mode strings used in trees.
const (
	ModeFile = "100644"
	ModeDir  = "40000"
)

// TreeEntry is one entry of a git tree.
type TreeEntry struct {
	Mode string
	Name string
	Hash Hash
}

// IsDir reports whether the entry is a subtree.
func (e TreeEntry) IsDir() bool { return e.Mode == ModeDir || e.Mode == "040000" }

// Signature is an author or committer line.
type Signature struct {
	Name  string
	Email string
	When  time.Time
}

// Commit is a parsed commit object.
type Commit struct {
	Tree      Hash
	Parents   []Hash
	Author    Signature
	Committer Signature
	Message   string
}

// ParseTree decodes a tree object's content.
func ParseTree(data []byte) ([]TreeEntry, error) {
	var out []TreeEntry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp <= 0 {
			return nil, fmt.Errorf("corrupt tree: bad mode")
		}
		nul := bytes.IndexByte(data[sp+1:], 0)
		if nul < 0 || len(data) < sp+1+nul+1+20 {
			return nil, fmt.Errorf("corrupt tree: truncated entry")
		}
		var e TreeEntry
		e.Mode = string(data[:sp])
		e.Name = string(data[sp+1 : sp+1+nul])
		copy(e.Hash[:], data[sp+1+nul+1:])
		out = append(out, e)
		data = data[sp+1+nul+1+20:]
	}
	return out, nil
}

// treeSortKey is git's tree order: directories compare as if named "name/".
func treeSortKey(e TreeEntry) string {
	if e.IsDir() {
		return e.Name + "/"
	}
	return e.Name
}

// EncodeTree sorts entries in git's order and encodes them.
func EncodeTree(entries []TreeEntry) []byte {
	sort.Slice(entries, func(i, j int) bool { return treeSortKey(entries[i]) < treeSortKey(entries[j]) })
	n := 0
	for _, e := range entries {
		n += len(e.Mode) + len(e.Name) + 22
	}
	buf := make([]byte, 0, n)
	for _, e := range entries {
		buf = append(buf, e.Mode...)
		buf = append(buf, ' ')
		buf = append(buf, e.Name...)
		buf = append(buf, 0)
		buf = append(buf, e.Hash[:]...)
	}
	return buf
}

func formatSig(s Signature) string {
	_, off := s.When.Zone()
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("%s <%s> %d %c%02d%02d", s.Name, s.Email, s.When.Unix(), sign, off/3600, (off%3600)/60)
}

// EncodeCommit encodes c as a commit object's content.
func EncodeCommit(c *Commit) []byte {
	var b strings.Builder
	b.WriteString("tree " + c.Tree.String() + "\n")
	for _, p := range c.Parents {
		b.WriteString("parent " + p.String() + "\n")
	}
	b.WriteString("author " + formatSig(c.Author) + "\n")
	b.WriteString("committer " + formatSig(c.Committer) + "\n\n")
	b.WriteString(c.Message)
	return []byte(b.String())
}

func parseSig(s string) Signature {
	var sig Signature
	lt, gt := strings.IndexByte(s, '<'), strings.LastIndexByte(s, '>')
	if lt < 0 || gt < lt {
		return sig
	}
	sig.Name = strings.TrimSpace(s[:lt])
	sig.Email = s[lt+1 : gt]
	f := strings.Fields(s[gt+1:])
	if len(f) >= 1 {
		sec, _ := strconv.ParseInt(f[0], 10, 64)
		loc := time.UTC
		if len(f) >= 2 && len(f[1]) == 5 {
			h, _ := strconv.Atoi(f[1][1:3])
			m, _ := strconv.Atoi(f[1][3:5])
			off := h*3600 + m*60
			if f[1][0] == '-' {
				off = -off
			}
			loc = time.FixedZone("", off)
		}
		sig.When = time.Unix(sec, 0).In(loc)
	}
	return sig
}

// ParseCommit decodes a commit object's content.
func ParseCommit(data []byte) (*Commit, error) {
	c := &Commit{}
	s := string(data)
	hdr, msg, _ := strings.Cut(s, "\n\n")
	c.Message = msg
	for _, line := range strings.Split(hdr, "\n") {
		k, v, _ := strings.Cut(line, " ")
		switch k {
		case "tree", "parent":
			h, err := ParseHash(v)
			if err != nil {
				return nil, fmt.Errorf("corrupt commit: %w", err)
			}
			if k == "tree" {
				c.Tree = h
			} else {
				c.Parents = append(c.Parents, h)
			}
		case "author":
			c.Author = parseSig(v)
		case "committer":
			c.Committer = parseSig(v)
		}
	}
	if c.Tree == ZeroHash {
		return nil, fmt.Errorf("corrupt commit: no tree")
	}
	return c, nil
}

// ParseHash parses a 40-hex object name.
func ParseHash(s string) (Hash, error) {
	if h, ok := parseHashLine([]byte(s)); ok && len(s) == 40 {
		return h, nil
	}
	return ZeroHash, apperr.New(apperr.Schema, "%q is not a full object name", s)
}
