"""The command line that starts N ranks of a module: torchrun on this
machine, or, across the nodes of a Slurm allocation, srun starting one
torchrun a node, each with its share of the ranks, the rendezvous on the
allocation's first node (torchrun's static rendezvous: node rank 0 hosts it).

Every rank's events go to files the caller reads, so across nodes the
caller's work folder must be one every node sees: `shared_work_root()`.
"""
import os
import shutil
import socket
import subprocess
import sys

# torchrun's own default; taken only where no free port can be asked for on
# the first node (the caller runs elsewhere, e.g. salloc's login shell).
RENDEZVOUS_PORT_BASE, RENDEZVOUS_PORT_SPREAD = 29500, 20000


class AllocationError(Exception):
    """The ranks cannot go over the nodes asked for; the message says why
    and what is allowed (the caller names the field)."""


def torchrun_command(ranks, nodes, module_and_arguments, python=sys.executable):
    """torchrun's (or srun's) argv for `ranks` ranks over `nodes` nodes."""
    if nodes <= 1:
        return [python, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node",
                str(ranks), "-m", *module_and_arguments]
    allocation = slurm_allocation(nodes)
    address, port = rendezvous_endpoint(allocation)
    # Each node's torchrun takes its node rank from srun's SLURM_NODEID, so
    # the rank order follows the allocation's node order.
    per_node = 'exec "$0" -m torch.distributed.run --node-rank "$SLURM_NODEID" "$@"'
    return ["srun", "--nodes", str(nodes), "--ntasks", str(nodes), "--ntasks-per-node", "1",
            "--kill-on-bad-exit=1", "sh", "-c", per_node, python,
            "--nnodes", str(nodes), "--nproc-per-node", str(ranks // nodes),
            "--master-addr", address, "--master-port", str(port), "-m",
            *module_and_arguments]


def slurm_allocation(nodes):
    """The allocation's node names, first first; AllocationError where the
    ranks cannot go over `nodes` of them."""
    if "SLURM_JOB_ID" not in os.environ:
        raise AllocationError(f"{nodes} nodes are started by srun inside a Slurm allocation "
                              "(sbatch, salloc); outside one, allowed: 1")
    for tool in ("srun", "scontrol"):
        if shutil.which(tool) is None:
            raise AllocationError(f"{nodes} nodes are started by srun, and this allocation's "
                                  f"PATH lacks {tool}; allowed here: 1")
    names = allocation_nodes()
    if len(names) < nodes:
        raise AllocationError(f"{nodes} asked for, this allocation "
                              f"({os.environ['SLURM_JOB_ID']}) has {len(names)}; allowed: 1 to "
                              f"{len(names)} (sbatch --nodes)")
    return names


def allocation_nodes():
    listed = os.environ.get("SLURM_JOB_NODELIST") or os.environ.get("SLURM_NODELIST", "")
    if not listed:
        return []
    found = subprocess.run(["scontrol", "show", "hostnames", listed], capture_output=True,
                           text=True, check=False)
    return found.stdout.split() if found.returncode == 0 else [listed]


def node_address(name):
    """The address Slurm reaches `name` at (its NodeAddr), else the name."""
    found = subprocess.run(["scontrol", "show", "node", "-o", name], capture_output=True,
                           text=True, check=False)
    for field in found.stdout.split():
        if field.startswith("NodeAddr="):
            return field.split("=", 1)[1] or name
    return name


def rendezvous_endpoint(allocation):
    """(address, port) on the allocation's first node."""
    first = allocation[0]
    here = os.environ.get("SLURMD_NODENAME")
    if here == first:
        with socket.socket() as probe:  # a port free on the node that will host it
            probe.bind(("", 0))
            port = probe.getsockname()[1]
    else:
        job = os.environ.get("SLURM_JOB_ID", "")
        port = RENDEZVOUS_PORT_BASE + (int(job) if job.isdigit() else 0) % RENDEZVOUS_PORT_SPREAD
    return node_address(first), port


def shared_work_root(nodes):
    """Where the ranks' work folder goes: any temporary folder on one node;
    across nodes one they all see, $STEPSCOPE_SHARED_DIR or the current
    folder (a Slurm job's, usually on the shared file system)."""
    if nodes <= 1:
        return None
    return os.environ.get("STEPSCOPE_SHARED_DIR") or os.getcwd()
