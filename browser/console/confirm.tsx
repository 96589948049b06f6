/** A confirmation asked in a modal <dialog>: focus moves into it, Escape cancels, the answer is a promise. */
import { render } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

function ConfirmDialog(props: { title: string; text: string; action: string; done(ok: boolean): void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    ref.current?.showModal();
  }, []);
  return (
    <dialog ref={ref} class="confirm" aria-labelledby="confirm-title" aria-describedby="confirm-text" onClose={() => props.done(ref.current?.returnValue === 'yes')}>
      <form method="dialog">
        <h2 id="confirm-title">{props.title}</h2>
        <p id="confirm-text">{props.text}</p>
        <div class="buttons">
          <button value="no" autofocus>Cancel</button>
          <button value="yes" class="danger">{props.action}</button>
        </div>
      </form>
    </dialog>
  );
}

/** Asks the user; resolves true when they confirm. */
export function confirmAction(title: string, text: string, action: string): Promise<boolean> {
  const host = document.createElement('div');
  document.body.appendChild(host);
  return new Promise((resolve) => {
    render(<ConfirmDialog title={title} text={text} action={action} done={(ok) => {
      render(null, host);
      host.remove();
      resolve(ok);
    }} />, host);
  });
}
