package validate_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/internal/diagtest"
	"github.com/tenancy-dev/tenancy/generator/validate"
)

func TestStewardshipProblems(t *testing.T) {
	const pool = "version = 1\nname = \"gpu-pool\"\n"
	const rest = "[flavors.h100]\ncapacity = 32\n"
	const dept = "[departments.science]\nguaranteed = 8\n"
	tests := map[string]problemCase{
		"owners and review dates on the pool, a department and a team are valid": {
			src: pool + "owners = [\"@acme/platform\", \"ops@example.com\"]\nreview_by = 2027-01-15\n" + rest + dept +
				"owners = [\"@acme/science-leads\"]\nreview_by = 2027-04-01\n" +
				"[teams.training]\nguaranteed = 8\ndepartment = \"science\"\nowners = [\"@alice\", \"@gitlab-group/sub.group/ml_team\"]\nreview_by = 2027-02-01\n",
		},
		"an owner that is not a handle is refused at its position": {
			src:  pool + "owners = [\"@acme/platform\", \"platform team\"]\n" + rest + "[teams.training]\nguaranteed = 8\n",
			want: diag.List{diagtest.Error("tenancy.toml", 3, 29, "owners[1]", field.ErrorTypeInvalid)},
		},
		"a handle without its @, a trailing slash and a GitLab role are refused": {
			src: pool + rest + "[teams.training]\nguaranteed = 8\nowners = [\"alice\", \"@acme/\", \"@@developer\"]\n",
			want: diag.List{
				diagtest.Error("tenancy.toml", 7, 11, "teams.training.owners[0]", field.ErrorTypeInvalid),
				diagtest.Error("tenancy.toml", 7, 20, "teams.training.owners[1]", field.ErrorTypeInvalid),
				diagtest.Error("tenancy.toml", 7, 30, "teams.training.owners[2]", field.ErrorTypeInvalid),
			},
		},
		"an owner listed twice is refused at the second": {
			src:  pool + rest + dept + "owners = [\"@a\", \"@a\"]\n[teams.training]\nguaranteed = 8\ndepartment = \"science\"\n",
			want: diag.List{diagtest.Error("tenancy.toml", 7, 17, "departments.science.owners[1]", field.ErrorTypeDuplicate)},
		},
		"an empty owners list is refused": {
			src:  pool + "owners = []\n" + rest + "[teams.training]\nguaranteed = 8\n",
			want: diag.List{diagtest.Error("tenancy.toml", 3, 10, "owners", field.ErrorTypeRequired)},
		},
		"owners that is not an array is refused": {
			src:  pool + "owners = \"@acme/platform\"\n" + rest + "[teams.training]\nguaranteed = 8\n",
			want: diag.List{diagtest.Error("tenancy.toml", 3, 10, "owners", field.ErrorTypeTypeInvalid)},
		},
		"a review_by that is a string is refused with the unquoted date": {
			src:  pool + "review_by = \"2027-01-15\"\n" + rest + "[teams.training]\nguaranteed = 8\n",
			want: diag.List{diagtest.Error("tenancy.toml", 3, 13, "review_by", field.ErrorTypeTypeInvalid)},
		},
		"a review_by with a time, or not a date at all, is refused": {
			src: pool + rest + "[teams.training]\nguaranteed = 8\nreview_by = 2027-01-15T10:00:00Z\n[teams.serving]\nreview_by = 15\n",
			want: diag.List{
				diagtest.Error("tenancy.toml", 7, 13, "teams.training.review_by", field.ErrorTypeTypeInvalid),
				diagtest.Error("tenancy.toml", 9, 13, "teams.serving.review_by", field.ErrorTypeTypeInvalid),
			},
		},
	}
	checkProblems(t, tests)
}

func TestIsOwner(t *testing.T) {
	for s, want := range map[string]bool{
		"@alice": true, "@a": true, "@acme/platform": true, "@group/sub/team": true, "@first.last": true,
		"alice@example.com": true, "a+b@mail.example.co.uk": true,
		"alice": false, "@": false, "@acme/": false, "@-bad": false, "@@developer": false, "a@b": false,
		"@alice smith": false, "": false,
	} {
		if got := validate.IsOwner(s); got != want {
			t.Errorf("IsOwner(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestGPUsPerNodeProblems(t *testing.T) {
	checkProblems(t, map[string]problemCase{
		"a node of no GPUs": {
			src:  "version = 1\nname = \"gpu-pool\"\n[flavors.h100]\ncapacity = 32\ngpus_per_node = 0\n[teams.a]\nguaranteed = 8\n",
			want: diag.List{diagtest.Error("tenancy.toml", 5, 17, "flavors.h100.gpus_per_node", field.ErrorTypeInvalid)},
		},
	})
}
