package gitstore

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// mkdirAll makes its directory while others make it too and another
// process removes emptied directories under it, as `git pack-refs --prune`
// does: os.MkdirAll alone reported "file exists" when its mkdir met the
// directory another had made and its lstat, a moment later, did not.
func TestMkdirAll_BesideARemover(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "refs", "ideate", "items")
	stop := make(chan struct{})
	removed := make(chan struct{})
	go func() {
		defer close(removed)
		for {
			select {
			case <-stop:
				return
			default:
			}
			os.Remove(dir)
			os.Remove(filepath.Dir(dir))
		}
	}()
	var makers sync.WaitGroup
	errs := make(chan error, 3)
	for range 3 {
		makers.Add(1)
		go func() {
			defer makers.Done()
			for i := 0; i < 20000; i++ {
				if err := mkdirAll(dir); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	makers.Wait()
	close(stop)
	<-removed
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
