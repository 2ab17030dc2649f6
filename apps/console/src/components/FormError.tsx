/** An error shown next to what caused it, announced to screen readers; nothing when there is none. */
export function FormError({ message, testId }: { message: string | null | undefined; testId?: string }) {
  return message ? (
    <p class="form-error" role="alert" data-testid={testId}>
      {message}
    </p>
  ) : null;
}
