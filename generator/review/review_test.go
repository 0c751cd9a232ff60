package review_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/review"
)

const src = `version = 1
name = "gpu-pool"
owners = ["@acme/platform"]
review_by = 2027-01-15
[flavors.h100]
capacity = 16
[departments.science]
guaranteed = 8
review_by = 2027-03-01
[teams.training]
department = "science"
guaranteed = 8
review_by = 2027-01-16
[teams.serving]
guaranteed = 8
`

func TestWarnings(t *testing.T) {
	p, _, err := generator.Check(generator.Source{Path: "tenancy.toml", Data: []byte(src)}, generator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		today time.Time
		want  string
	}{
		"on the day itself nothing is overdue": {today: time.Date(2027, 1, 15, 23, 59, 0, 0, time.UTC)},
		"the day after, the pool is": {
			today: time.Date(2027, 1, 16, 8, 0, 0, 0, time.UTC),
			want:  "tenancy.toml:4:13: warning: review_by: the pool was due for review on 2027-01-15 (1 day ago): review it with its teams, then set the next date",
		},
		"later, each part past its date, at its own key": {
			today: time.Date(2027, 3, 2, 0, 0, 0, 0, time.UTC),
			want: "tenancy.toml:4:13: warning: review_by: the pool was due for review on 2027-01-15 (46 days ago): review it with its teams, then set the next date\n" +
				"tenancy.toml:9:13: warning: departments.science.review_by: department science was due for review on 2027-03-01 (1 day ago): review it with its teams, then set the next date\n" +
				"tenancy.toml:13:13: warning: teams.training.review_by: team training was due for review on 2027-01-16 (45 days ago): review it with its teams, then set the next date",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := review.Warnings(p, tc.today)
			got.Sort()
			if diff := cmp.Diff(tc.want, got.String()); diff != "" {
				t.Errorf("Warnings (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestItems(t *testing.T) {
	p, _, err := generator.Check(generator.Source{Path: "tenancy.toml", Data: []byte(src)}, generator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	type item struct {
		Part     string
		Owners   []string
		Date     string
		DaysOver int
	}
	var got []item
	for _, it := range review.Items(p, time.Date(2027, 1, 20, 0, 0, 0, 0, time.UTC)) {
		got = append(got, item{it.Part, it.Owners, it.Date.Format(time.DateOnly), it.DaysOver})
	}
	want := []item{
		{"the pool", []string{"@acme/platform"}, "2027-01-15", 5},
		{"department science", nil, "2027-03-01", 0},
		{"team training", nil, "2027-01-16", 4},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Items (-want,+got):\n%s", diff)
	}
}
