package paging

import (
	"math"
	"testing"
)

func TestFit(t *testing.T) {
	tests := []struct {
		name   string
		sizes  []int
		budget int
		want   int
	}{
		{"Nil_Zero", nil, Budget, 0},
		{"Empty_Zero", []int{}, Budget, 0},
		{"OneSmall_One", []int{10}, Budget, 1},
		{"AllFit_All", []int{100, 200, 300}, Budget, 3},
		{"ExactlyBudget_Kept", []int{20000, 20000}, Budget, 2},
		{"OneOverBudget_Cut", []int{20000, 20001}, Budget, 1},
		{"LastFits_Exactly", []int{20000, 19999, 1}, Budget, 3},
		{"LastOverByOne_Cut", []int{20000, 19999, 2}, Budget, 2},
		{"FirstAloneOverBudget_Liveness", []int{Budget + 1, 1}, Budget, 1},
		{"FirstHuge_Liveness", []int{math.MaxInt, 1}, Budget, 1},
		{"FirstEqualsBudget_NextCut", []int{Budget, 1}, Budget, 1},
		{"PrefixOnly_LaterSmallNotTaken", []int{10, 50, 1}, 40, 1},
		{"ZeroBudget_ZeroSizesFit", []int{0, 0, 5}, 0, 2},
		{"ZeroBudget_Liveness", []int{5, 0}, 0, 1},
		{"NegativeBudget_Liveness", []int{0, 0}, -1, 1},
		{"NegativeSize_CountsZero", []int{-50, 40}, 40, 2},
		{"MinIntSize_CountsZero", []int{math.MinInt, 40, 1}, 40, 2},
		{"HugeSizes_NoOverflow", []int{1, math.MaxInt}, math.MaxInt, 1},
		{"HugeBudget_AllFit", []int{math.MaxInt / 2, math.MaxInt / 2}, math.MaxInt, 2},
		{"MinIntBudget_Liveness", []int{1, 1}, math.MinInt, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Fit(tc.sizes, tc.budget); got != tc.want {
				t.Fatalf("Fit(%v, %d) = %d, want %d", tc.sizes, tc.budget, got, tc.want)
			}
		})
	}
}
