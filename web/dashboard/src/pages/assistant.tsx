import { v1, type Assistant } from '../api/client.js';
import { Loaded, useLoad } from '../ui/components.js';
import { href } from '../router.js';
import { AnalyticsTab } from './analytics.js';
import { AssistantSettingsTab } from './assistant-settings.js';
import { ConversationsTab } from './conversations.js';
import { DocumentsTab } from './documents.js';
import { EvalsTab } from './evals.js';
import { PlaygroundTab } from './playground.js';
import { TalkToIt } from './talk.js';
import { ToolsTab } from './tools.js';
import { TestsTab } from './tests.js';

const TABS: Array<[string, string]> = [
  ['settings', 'Settings'],
  ['documents', 'Documents'],
  ['tools', 'Tools'],
  ['playground', 'Playground'],
  ['conversations', 'Conversations'],
  ['analytics', 'Analytics'],
  ['evals', 'Evals'],
  ['tests', 'Tests'],
];

/** One assistant: its settings and everything that belongs to it, one tab per concern. */
export function AssistantPage({
  assistantId,
  tab,
  sub,
}: {
  assistantId: string;
  tab: string;
  sub: string | undefined;
}) {
  const load = useLoad(
    () => v1.GET('/api/v1/assistants/{assistantId}', { params: { path: { assistantId } } }),
    [assistantId],
  );
  const base = `/assistants/${encodeURIComponent(assistantId)}`;
  return (
    <Loaded load={load} label="Loading the assistant…">
      {({ assistant }) => (
        <section>
          <p class="crumbs">
            <a href={href('/assistants')}>Assistants</a> /
          </p>
          <h1 tabIndex={-1}>{assistant.name}</h1>
          {assistant.settings.voice.enabled && tab !== 'playground' && <TalkToIt assistant={assistant} />}
          <nav class="tabs" aria-label="Assistant sections">
            {TABS.map(([id, label]) => (
              <a href={href(id === 'settings' ? base : `${base}/${id}`)} aria-current={tab === id ? 'page' : undefined}>
                {label}
              </a>
            ))}
          </nav>
          <TabBody assistant={assistant} tab={tab} sub={sub} onChanged={() => void load.reload()} />
        </section>
      )}
    </Loaded>
  );
}

function TabBody({
  assistant,
  tab,
  sub,
  onChanged,
}: {
  assistant: Assistant;
  tab: string;
  sub: string | undefined;
  onChanged: () => void;
}) {
  switch (tab) {
    case 'documents':
      return <DocumentsTab assistant={assistant} />;
    case 'tools':
      return <ToolsTab assistant={assistant} />;
    case 'playground':
      return <PlaygroundTab assistant={assistant} />;
    case 'conversations':
      return <ConversationsTab assistant={assistant} conversationId={sub} />;
    case 'analytics':
      return <AnalyticsTab assistant={assistant} />;
    case 'evals':
      return <EvalsTab assistant={assistant} />;
    case 'tests':
      return <TestsTab assistant={assistant} />;
    default:
      return <AssistantSettingsTab assistant={assistant} onSaved={onChanged} />;
  }
}
