package validate

import (
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/agreement"
)

// ownerHandle is what CODEOWNERS accepts on GitHub and GitLab alike: a user
// (@alice, GitLab's may hold dots and underscores), a team or group
// (@org/team; GitLab's nest, @group/subgroup/team), or an e-mail address.
// GitLab's role owners (@@developer) are left out: they name no one a
// review request can be sent to.
var (
	ownerHandle = regexp.MustCompile(`^@[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9_])?(?:/[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9_])?)*$`)
	ownerEmail  = regexp.MustCompile(`^[A-Za-z0-9.!#$%&'*+=?^_{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$`)
)

// maxOwnerLen bounds a handle: GitHub's and GitLab's limits are far below.
const maxOwnerLen = 255

// IsOwner reports whether s is an owner CODEOWNERS accepts: @user,
// @org/team (@group/subgroup/team on GitLab) or an e-mail address.
func IsOwner(s string) bool {
	return len(s) <= maxOwnerLen && (ownerHandle.MatchString(s) || ownerEmail.MatchString(s))
}

// owners checks the owners of the pool, each department and each team.
func (v *validator) owners() {
	v.ownerList(v.a.Stewardship)
	for _, d := range v.a.Departments {
		v.ownerList(d.Stewardship)
	}
	for _, t := range v.a.Teams {
		v.ownerList(t.Stewardship)
	}
}

func (v *validator) ownerList(s agreement.Stewardship) {
	if !s.Owners.IsSet() {
		return
	}
	if len(s.Owners.Value) == 0 {
		v.errorf(field.ErrorTypeRequired, s.Owners.Pos, s.Owners.Path, "must list at least one owner, such as \"@org/team\" (leave the key out for none)")
		return
	}
	seen := map[string]int{}
	for _, o := range s.Owners.Value {
		switch {
		case !IsOwner(o.Value):
			v.errorf(field.ErrorTypeInvalid, o.Pos, o.Path, "%q is not an owner CODEOWNERS accepts: write a user (@alice), a team (@org/team) or an e-mail address", o.Value)
		case seen[o.Value] > 0:
			v.errorf(field.ErrorTypeDuplicate, o.Pos, o.Path, "%q is listed twice (first at line %d)", o.Value, seen[o.Value])
		}
		if seen[o.Value] == 0 {
			seen[o.Value] = o.Pos.Line
		}
	}
}
