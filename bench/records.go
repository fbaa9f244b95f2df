package main

import (
	"bufio"
	"fmt"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// seedRecords puts b.records records in s's store at repo before its
// figures. The reference's go through its own MCP server (into its
// database); ours, unless -seed-mcp, through one `git fast-import` laid
// out as an append lays them out (recordFixture): a store that grew to
// 10k records over weeks, not one that took 10k appends in the last few
// seconds. The difference is the file system's, not the store's: each
// append frees about three inodes (the ref file it replaces, the packs a
// roll-up merges), and an ext4 without a journal walks every inode freed
// in the last minute or more on each file it creates, so the figures
// taken right after a burst of 10k appends measure the burst.
func (b *bench) seedRecords(s subject, repo string) {
	if s.isRef() || b.seedMCP {
		c := startMCP(s, repo)
		c.seed(b.records)
		c.stop()
		return
	}
	recordFixture(repo, b.records)
}

// recordFixture writes n records on refs/ideate/record of the repository
// dir as n commits of one `git fast-import`, each adding one record file
// where an append puts it, with an append's message, ids a millisecond
// apart and ending a second ago. A read of the newest back checks it.
func recordFixture(dir string, n int) {
	if n == 0 {
		return
	}
	var last string
	fastImport(dir, func(w *bufio.Writer, data func(string)) {
		ids := record.NewIDSource()
		start := time.Now().Add(-time.Second - time.Duration(n)*time.Millisecond)
		for i := 0; i < n; i++ {
			t := start.Add(time.Duration(i) * time.Millisecond)
			r := &record.Record{ID: ids.New(t), Kind: "finding", Claim: fmt.Sprintf("seed %d", i), Scope: "bench",
				Source:  record.Source{CapturePoint: "mcp:record_append", SessionID: "bench", Timestamp: textfmt.Timestamp(t)},
				Content: strings.Repeat("seed body ", 30)}
			dirs, file := record.Path(r.ID)
			fmt.Fprintf(w, "commit %s\n", record.RefName)
			fmt.Fprintf(w, "committer bench <bench@example.com> %d +0000\n", t.Unix())
			data(record.CommitMessage(r))
			if i == 0 {
				fmt.Fprintf(w, "M 100644 inline %s\n", record.FormatFile)
				data(fmt.Sprintf("ideate-record %d\n", record.FormatVersion))
			}
			fmt.Fprintf(w, "M 100644 inline %s/%s\n", strings.Join(dirs, "/"), file)
			data(string(record.Marshal(r)))
			last = r.Claim
		}
	})
	if got := git(dir, "log", "-1", "--format=%s", record.RefName); got != "finding: "+last {
		must(fmt.Errorf("record fixture: the newest record is %q, not %q", got, last))
	}
}
