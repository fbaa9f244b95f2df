package atomicfile_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/atomicfile"
)

func TestReplace(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a", "b", "f.txt")
	if err := atomicfile.Replace(p, []byte("one"), atomicfile.Options{}); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o644 {
		t.Fatalf("new file mode %v", st.Mode())
	}
	os.Chmod(p, 0o600)
	if err := atomicfile.Replace(p, []byte("two"), atomicfile.Options{Sync: true}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	st, _ := os.Stat(p)
	if string(b) != "two" || st.Mode().Perm() != 0o600 {
		t.Fatalf("replaced: %q %v (the mode must be kept)", b, st.Mode())
	}
	if err := atomicfile.Replace(p, []byte("x"), atomicfile.Options{Mode: 0o640}); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o640 {
		t.Fatalf("explicit mode %v", st.Mode())
	}
	ents, _ := os.ReadDir(filepath.Dir(p))
	if len(ents) != 1 {
		t.Fatalf("left behind: %v", ents)
	}
	// A directory where the file goes: a typed error, nothing left over.
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	os.WriteFile(filepath.Join(dir, "d", "x"), nil, 0o644)
	if err := atomicfile.Replace(filepath.Join(dir, "d"), []byte("y"), atomicfile.Options{}); apperr.CodeOf(err) != apperr.Write {
		t.Fatalf("over a directory: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Fatalf("left behind: %v", ents)
	}
}

func TestCreate_OneWriterWins(t *testing.T) {
	p := filepath.Join(t.TempDir(), "once")
	var wg sync.WaitGroup
	won := make(chan string, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			exists, err := atomicfile.Create(p, []byte{byte('a' + i)})
			if err != nil {
				t.Error(err)
			}
			if !exists {
				won <- string(rune('a' + i))
			}
		}(i)
	}
	wg.Wait()
	close(won)
	var winners []string
	for w := range won {
		winners = append(winners, w)
	}
	b, _ := os.ReadFile(p)
	if len(winners) != 1 || string(b) != winners[0] {
		t.Fatalf("winners %v, file %q", winners, b)
	}
	if ents, _ := os.ReadDir(filepath.Dir(p)); len(ents) != 1 {
		t.Fatalf("left behind: %v", ents)
	}
}
