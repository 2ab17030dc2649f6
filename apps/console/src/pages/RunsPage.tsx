import { useEffect, useState } from 'preact/hooks';
import { describeError } from '../api/api.error';
import type { AgentSummary, Run } from '../api/types';
import { useApp } from '../app.context';
import { StatusBadge } from '../components/StatusBadge';
import { relativeTime, shortId } from '../format';
import { useLiveData, useNow } from '../live/live.hooks';
import { onLinkClick } from '../router';
import { FormError } from '../components/FormError';

/** Events that change what the list shows (status, stage, new runs); text and tool traffic do not. */
const LIST_EVENTS = new Set(['run.created', 'run.status', 'stage.entered', 'run.finished', 'run.failed', 'run.cancelled']);

export function RunsPage() {
  const { http } = useApp();
  const runs = useLiveData(async () => (await http.runs()).runs, (event) => LIST_EVENTS.has(event.type), []);
  const now = useNow(5000);
  return (
    <section class="page runs-page">
      <StartRunForm />
      <h2>Runs</h2>
      <FormError message={runs.error && !runs.data ? describeError(runs.error) : undefined} />
      {!runs.data ? (
        <p class="muted">Loading…</p>
      ) : runs.data.length === 0 ? (
        <p class="muted" data-testid="runs-empty">
          No runs yet. Start one above.
        </p>
      ) : (
        <table class="runs" data-testid="runs-table">
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Status</th>
              <th scope="col">Stage</th>
              <th scope="col">Agent</th>
              <th scope="col">Owner</th>
              <th scope="col">Task</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {runs.data.map((run) => (
              <RunRow key={run.id} run={run} now={now} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function RunRow({ run, now }: { run: Run; now: number }) {
  const path = `/runs/${run.id}`;
  return (
    <tr data-testid="run-row" data-run-id={run.id} data-status={run.status}>
      <td>
        <a href={path} onClick={(event) => onLinkClick(event, path)} data-testid="run-link">
          {shortId(run.id)}
        </a>
      </td>
      <td>
        <StatusBadge run={run} />
      </td>
      <td>{run.stage ?? '—'}</td>
      <td>{run.agent}</td>
      <td>{run.owner}</td>
      <td class="task" title={run.task}>
        {run.task}
      </td>
      <td title={run.updatedAt}>{relativeTime(run.updatedAt, now)}</td>
    </tr>
  );
}

function StartRunForm() {
  const { http, navigate } = useApp();
  const [agents, setAgents] = useState<AgentSummary[]>();
  const [agent, setAgent] = useState('');
  const [task, setTask] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string>();
  useEffect(() => {
    http.agents().then(
      ({ agents: list }) => {
        setAgents(list);
        setAgent((current) => current || (list[0]?.name ?? ''));
      },
      (error: unknown) => setProblem(describeError(error)),
    );
  }, [http]);
  const start = async (): Promise<void> => {
    setBusy(true);
    setProblem(undefined);
    try {
      const { run } = await http.startRun(agent, task);
      navigate(`/runs/${run.id}`);
    } catch (error) {
      setProblem(describeError(error));
      setBusy(false);
    }
  };
  const description = agents?.find((a) => a.name === agent)?.description;
  return (
    <form
      class="start-run"
      onSubmit={(event) => {
        event.preventDefault();
        void start();
      }}
    >
      <h2>Start a run</h2>
      <div class="field">
        <label for="start-agent">Agent</label>
        <select id="start-agent" data-testid="start-agent" value={agent} onChange={(event) => setAgent(event.currentTarget.value)}>
          {(agents ?? []).map((a) => (
            <option key={a.name} value={a.name}>
              {a.name}
            </option>
          ))}
        </select>
        {description ? <p class="muted">{description}</p> : null}
      </div>
      <div class="field">
        <label for="start-task">Task</label>
        <textarea id="start-task" data-testid="start-task" rows={2} value={task} onInput={(event) => setTask(event.currentTarget.value)} />
      </div>
      <div class="actions">
        <button type="submit" data-testid="start-submit" disabled={busy || agent === '' || task.trim() === ''}>
          Start run
        </button>
      </div>
      <FormError message={problem} />
    </form>
  );
}
