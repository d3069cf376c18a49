// Run All clicked while the notebook's kernel is still starting runs once the kernel is ready.
// JupyterLab 4 runs nothing in that case (jupyterlab/jupyterlab#8490): its notice, on by
// jupyter/overrides.json's enableKernelInitNotification, still covers any other way to run.
import { JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ISessionContext, Notification } from '@jupyterlab/apputils';
import { NotebookActions } from '@jupyterlab/notebook';

const WAIT_MS = 180_000; // at most: a kernel not ready by then gets JupyterLab's own answer

function ready(context: ISessionContext): boolean {
  const kernel = context.session?.kernel;
  return !!kernel && kernel.connectionStatus === 'connected' && ['idle', 'busy'].includes(kernel.status);
}

async function kernelReady(context: ISessionContext): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!ready(context) && !context.isDisposed && Date.now() < deadline) {
    await new Promise(resolve => setTimeout(resolve, 100));
  }
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'run-all-waits:plugin',
  description: 'Run All clicked while the kernel starts runs once the kernel is ready.',
  autoStart: true,
  activate: () => {
    const actions = NotebookActions as { runAll: typeof NotebookActions.runAll };
    const runAll = actions.runAll;
    actions.runAll = async (...args: Parameters<typeof runAll>) => {
      const context = args[1];
      if (context && !context.hasNoKernel && !ready(context)) {
        Notification.info('Run All starts as soon as the kernel is ready.', { autoClose: 4000 });
        await kernelReady(context);
      }
      return runAll(...args);
    };
  }
};

export default plugin;
