"""The command that starts the ranks (stepscope.distributed.torchrun): torchrun
alone on one machine; across nodes srun with a torchrun a node, checked here
against a fake Slurm (scontrol and srun on PATH). tst_slurm runs it for
real on the two-node test cluster."""
import os
import subprocess

import pytest

from stepscope.distributed import torchrun


@pytest.fixture
def fake_slurm(tmp_path, monkeypatch):
    """An allocation of node-a and node-b (NodeAddr 10.0.0.7 and …8) as
    scontrol describes it, the caller on node-a."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "scontrol").write_text(
        "#!/bin/sh\n"
        'if [ "$1 $2" = "show hostnames" ]; then echo node-a; echo node-b; exit 0; fi\n'
        'if [ "$1 $2 $3" = "show node -o" ]; then\n'
        '  case "$4" in node-a) echo "NodeName=node-a Arch=x86_64 NodeAddr=10.0.0.7 '
        'NodeHostName=node-a" ;; *) echo "NodeName=$4 NodeAddr=10.0.0.8" ;; esac; exit 0; fi\n'
        "exit 1\n")
    (bin_dir / "srun").write_text("#!/bin/sh\nexit 0\n")
    for tool in ("scontrol", "srun"):
        os.chmod(bin_dir / tool, 0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    monkeypatch.setenv("SLURM_JOB_NODELIST", "node-[a-b]")
    monkeypatch.setenv("SLURMD_NODENAME", "node-a")


def test_one_node_is_torchrun_standalone():
    command = torchrun.torchrun_command(4, 1, ["some.module", "x"], python="py")
    assert command == ["py", "-m", "torch.distributed.run", "--standalone", "--nproc-per-node",
                       "4", "-m", "some.module", "x"]


def test_nodes_outside_an_allocation_say_what_they_need(monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    with pytest.raises(torchrun.AllocationError, match="2 nodes are started by srun inside a "
                       r"Slurm allocation \(sbatch, salloc\); outside one, allowed: 1"):
        torchrun.torchrun_command(4, 2, ["some.module"])


def test_more_nodes_than_the_allocation_holds_are_refused(fake_slurm):
    with pytest.raises(torchrun.AllocationError, match=r"3 asked for, this allocation \(4242\) "
                       "has 2; allowed: 1 to 2"):
        torchrun.torchrun_command(6, 3, ["some.module"])


def test_across_nodes_srun_starts_a_torchrun_a_node_with_its_node_rank(fake_slurm):
    command = torchrun.torchrun_command(4, 2, ["some.module", "x"], python="py")
    assert command[:8] == ["srun", "--nodes", "2", "--ntasks", "2", "--ntasks-per-node", "1",
                           "--kill-on-bad-exit=1"]
    shell = command[command.index("sh"):]
    assert shell[1] == "-c"
    # What each node's shell runs, with the node rank srun gives that node.
    for node_id in ("0", "1"):
        ran = subprocess.run(["sh", "-c", shell[2], "echo", *shell[4:]],
                             env={**os.environ, "SLURM_NODEID": node_id},
                             capture_output=True, text=True, check=True).stdout.split()
        assert ran[:4] == ["-m", "torch.distributed.run", "--node-rank", node_id]
        options = dict(zip(ran[4:12:2], ran[5:12:2]))
        assert options == {"--nnodes": "2", "--nproc-per-node": "2",
                           "--master-addr": "10.0.0.7", "--master-port": options["--master-port"]}
        assert 0 < int(options["--master-port"]) < 65536
        assert ran[12:] == ["-m", "some.module", "x"]
    assert shell[3] == "py"


def test_a_caller_off_the_first_node_takes_a_port_from_the_job_id(fake_slurm, monkeypatch):
    monkeypatch.setenv("SLURMD_NODENAME", "login")
    command = torchrun.torchrun_command(2, 2, ["some.module"], python="py")
    port = command[command.index("--master-port") + 1]
    assert port == str(torchrun.RENDEZVOUS_PORT_BASE + 4242)


def test_the_work_folder_is_shared_across_nodes_only(tmp_path, monkeypatch):
    monkeypatch.delenv("STEPSCOPE_SHARED_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    assert torchrun.shared_work_root(1) is None
    assert torchrun.shared_work_root(2) == str(tmp_path)
    monkeypatch.setenv("STEPSCOPE_SHARED_DIR", "/shared/scratch")
    assert torchrun.shared_work_root(2) == "/shared/scratch"
