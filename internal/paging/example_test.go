package paging_test

import (
	"errors"
	"fmt"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/paging"
)

func Example() {
	type row struct {
		ID    string `json:"id"`
		Claim string `json:"claim"`
	}
	rows := []row{{"01JB", "first"}, {"01JA", "second"}}

	// Measure each row as MCP does, keep what fits, mint the next cursor
	// from the last kept row.
	sizes := make([]int, len(rows))
	for i, r := range rows {
		sizes[i], _ = paging.CompactLen(r)
	}
	n := paging.Fit(sizes, paging.Budget)
	filter := "scope=foo"
	next := paging.EncodeCursor("record", filter, []string{rows[n-1].ID})

	key, err := paging.DecodeCursor(next, "record", filter, 1)
	fmt.Println(n, key, err)

	_, err = paging.DecodeCursor(next, "record", "scope=bar", 1)
	var ae *apperr.Error
	errors.As(err, &ae)
	fmt.Println(ae.Code)
	// Output:
	// 2 [01JA] <nil>
	// CURSOR_MISMATCH
}
