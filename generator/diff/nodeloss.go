package diff

import (
	"fmt"

	"github.com/tenancy-dev/tenancy/generator/capacity"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// NodeLoss is what losing one node of a flavor would break, on the new
// side: the pull request comment's "if one node is lost" line.
type NodeLoss struct {
	Flavor      string `json:"flavor"`
	GPUsPerNode int64  `json:"gpusPerNode"`
	// Left is the capacity one node fewer leaves.
	Left int64 `json:"left"`
	// Short is how far the guarantees exceed Left; OverPromised how far
	// the never-lent GPUs do. Both 0: the agreement survives the loss.
	Short        int64 `json:"short"`
	OverPromised int64 `json:"overPromised"`
}

func nodeLoss(p *plan.Agreement) []NodeLoss {
	var out []NodeLoss
	for _, f := range capacity.NodeLost(p) {
		out = append(out, NodeLoss{Flavor: f.Flavor, GPUsPerNode: f.Was - f.Now, Left: f.Now, Short: f.Short, OverPromised: f.OverPromised})
	}
	return out
}

// String says it in a line: "h100, one node (8 GPUs) lost, 56 left: the
// guarantees are 8 short".
func (n NodeLoss) String() string {
	s := fmt.Sprintf("%s, one node (%d GPUs) lost, %d left: ", n.Flavor, n.GPUsPerNode, n.Left)
	switch {
	case n.Short > 0 && n.OverPromised > 0:
		return s + fmt.Sprintf("the guarantees are %d short and the never-lent GPUs over-promised by %d", n.Short, n.OverPromised)
	case n.Short > 0:
		return s + fmt.Sprintf("the guarantees are %d short", n.Short)
	case n.OverPromised > 0:
		return s + fmt.Sprintf("the never-lent GPUs are over-promised by %d", n.OverPromised)
	}
	return s + "every guarantee still fits"
}
