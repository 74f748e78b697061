import { useState } from 'preact/hooks';

/** Writes a message: Enter sends, Shift+Enter starts a new line. `onSend` answers whether the post was admitted. */
export function Composer(props: { disabled: boolean; onSend: (text: string) => Promise<boolean> }) {
  const [text, setText] = useState('');
  const [sending, setSending] = useState(false);

  const send = async (): Promise<void> => {
    const body = text.trim();
    if (body === '' || sending) return;
    setSending(true);
    const ok = await props.onSend(body);
    setSending(false);
    if (ok) setText('');
  };

  return (
    <form
      class="composer"
      data-testid="composer"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      <textarea
        name="text"
        rows={2}
        placeholder="Write a message — Enter sends, Shift+Enter for a new line"
        value={text}
        onInput={(e) => setText(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
            e.preventDefault();
            void send();
          }
        }}
      />
      <button type="submit" class="primary" disabled={props.disabled || sending}>
        Send
      </button>
    </form>
  );
}
