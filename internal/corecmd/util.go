package corecmd

import (
	"fmt"
	"io"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/paging"
)

// CheckLimit refuses a --limit outside 1..MaxLimit: the library clamps
// (the MCP contract asks it to), but a user who typed 0 or 100000 gets
// told rather than served something else.
func CheckLimit(l *int) error {
	if l != nil && (*l < 1 || *l > paging.MaxLimit) {
		return apperr.New(apperr.Schema, "--limit %d is outside 1..%d", *l, paging.MaxLimit)
	}
	return nil
}

// ListHuman prints a human listing. Unpaged (no --limit or --cursor given)
// it fetches every page at the largest page size; paged, it prints one page
// and a resume hint when more remain. fetch serves one page from a limit
// and a cursor, printing its rows to w and returning how many it printed
// and the next cursor.
func ListHuman(out io.Writer, limit *int, cursor string, fetch func(w io.Writer, limit *int, cursor string) (int, *string, error)) error {
	paged := limit != nil || cursor != ""
	if !paged {
		max := paging.MaxLimit
		limit = &max
	}
	w := NewBufWriter(out)
	defer w.Flush()
	n := 0
	for {
		rows, next, err := fetch(w, limit, cursor)
		if err != nil {
			return err
		}
		n += rows
		if next == nil {
			break
		}
		if paged {
			fmt.Fprintf(w, "(more items — resume with --cursor %s)\n", *next)
			break
		}
		cursor = *next
	}
	if n == 0 {
		fmt.Fprintln(w, "(no items)")
	}
	return nil
}
