// The shop's page: asks its own server for a checkout session, opens it with the library, and
// asks its own server again to confirm before it tells the buyer the order is paid.
const result = document.getElementById('result');
const log = document.getElementById('log');
const note = (line) => {
  const li = document.createElement('li');
  li.textContent = line;
  log.append(li);
};

document.getElementById('pay').addEventListener('click', async () => {
  result.textContent = '';
  const res = await fetch('/session', { method: 'POST' });
  if (!res.ok) {
    result.textContent = 'Não foi possível iniciar o pagamento.';
    return;
  }
  const { sessionId, clientSecret } = await res.json();
  window.PagamentosCheckout.open({
    sessionId,
    clientSecret,
    onSuccess: async ({ paymentId, status }) => {
      note(`success ${paymentId} ${sessionId} ${status}`);
      // Never ship on the browser's word: confirm from the server (or wait for the webhook).
      const confirmed = await (await fetch(`/confirm?session=${encodeURIComponent(sessionId)}`)).json();
      result.textContent = confirmed.paymentStatus === 'approved' ? `Pedido pago (${confirmed.paymentId}).` : 'Pagamento em análise.';
    },
    onCancel: () => {
      note('cancel');
      result.textContent = 'Pagamento cancelado.';
    },
    onError: (e) => note(`error ${e.code}`),
  });
});
