"""The kernel: AgentKernel assembles capabilities; AgentRun is one observable, steerable run."""

from kgent.core.events import RunResult
from kgent.kernel.config import KernelConfig
from kgent.kernel.kernel import AgentKernel
from kgent.kernel.run import AgentRun

__all__ = ["AgentKernel", "AgentRun", "KernelConfig", "RunResult"]
