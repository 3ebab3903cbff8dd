package example;

import br.com.minhaloja.pagamentos.model.*;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.UUID;

// The flow of docs/other-languages.md in Java, with the models that openapi-generator-plus
// generated from /v1/openapi.json, over java.net.http (the JDK's own client) and Jackson.
// Run by `npm run test:clients` (examples/other-languages) against a running server; any
// surprise is an exception and a non-zero exit.
public final class Main {
  static final ObjectMapper JSON = Json.mapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true);
  static final HttpClient HTTP = HttpClient.newHttpClient();

  // Every call goes through here: the base URL, the JSON body, and the credentials the call
  // takes (a secret key as a bearer token, or the admin session's cookie and CSRF token).
  record Answer(int status, String body, HttpResponse<String> raw) {
    <T> T as(Class<T> type) throws Exception { return JSON.readValue(body, type); }
  }
  static String base;
  static Answer call(String method, String path, Object body, String bearer, String idempotencyKey, String[] admin) throws Exception {
    HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(base + path))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
    if (body != null) req.header("Content-Type", "application/json");
    if (bearer != null) req.header("Authorization", "Bearer " + bearer);
    if (idempotencyKey != null) req.header("Idempotency-Key", idempotencyKey);
    if (admin != null) { req.header("Cookie", admin[0]); if (!method.equals("GET")) req.header("X-CSRF-Token", admin[1]); }
    HttpResponse<String> res = HTTP.send(req.build(), HttpResponse.BodyHandlers.ofString());
    return new Answer(res.statusCode(), res.body(), res);
  }
  static Answer ok(Answer a) {
    if (a.status() != 200) throw new IllegalStateException("HTTP " + a.status() + ": " + a.body());
    return a;
  }
  static void check(boolean ok, String what) {
    if (!ok) throw new IllegalStateException("failed: " + what);
    System.out.println("ok - " + what);
  }

  // Polls a payment until it leaves `pending` (at most 20 s).
  static Payment poll(String id, String sk) throws Exception {
    Payment p = ok(call("GET", "/v1/payments/" + id, null, sk, null, null)).as(Payment.class);
    for (int i = 0; i < 200 && p.getStatus() == Payment.StatusEnum.PENDING; i++) {
      Thread.sleep(100);
      p = ok(call("GET", "/v1/payments/" + id, null, sk, null, null)).as(Payment.class);
    }
    return p;
  }

  public static void main(String[] args) throws Exception {
    base = System.getenv("PAGAMENTOS_URL");
    String adminEmail = System.getenv("ADMIN_EMAIL"), adminPassword = System.getenv("ADMIN_PASSWORD");

    // Sandbox keys: the secret key (sk_test_) goes in Authorization on every server-side call.
    SandboxAccount account = ok(call("POST", "/v1/sandbox/accounts", new SandboxAccountRequest().name("Loja Java"), null, null, null)).as(SandboxAccount.class);
    String sk = account.getKeys().getSecretKey().getKey();
    String accountId = account.getAccount().getId();
    check(sk.startsWith("sk_test_"), "signed up: secret key " + sk.substring(0, 8) + "...");

    // A recipient, and a split rule for it made through the admin API (session cookie + CSRF).
    Recipient recipient = ok(call("POST", "/v1/recipients", new CreateRecipientRequest().name("Vendedor Java").document("11.222.333/0001-81")
        .bankAccount(new BankAccount().bankCode("341").agency("0001").account("12345-6").accountType(BankAccount.AccountTypeEnum.CHECKING)), sk, "rcp-" + UUID.randomUUID(), null)).as(Recipient.class);
    Answer signIn = ok(call("POST", "/admin/session", new AdminLoginRequest().email(adminEmail).password(adminPassword), null, null, null));
    String cookie = signIn.raw().headers().firstValue("set-cookie").orElseThrow().split(";")[0];
    String[] admin = { cookie, signIn.as(AdminSession.class).getCsrfToken() };
    SplitRule created = ok(call("POST", "/admin/split-rules", new CreateSplitRuleRequest().accountId(accountId).priority(10)
        .splits(List.of(new PercentageSplitShareRequest().recipientId(recipient.getId()).percentage(new java.math.BigDecimal("30")))).reason("Contrato Java"), null, "spr-" + UUID.randomUUID(), admin)).as(SplitRule.class);
    SplitRule rule = ok(call("GET", "/admin/split-rules/" + created.getId(), null, null, null, admin)).as(SplitRule.class);
    SplitShare share = rule.getSplits().get(0);
    check(share instanceof PercentageSplitShare && ((PercentageSplitShare) share).getPercentage().compareTo(new java.math.BigDecimal("30")) == 0, "split rule read back: a PercentageSplitShare of 30% (discriminator `type`)");

    // A card payment with an idempotency key, and its replay.
    String key = "order-" + UUID.randomUUID();
    CardPaymentRequest card = new CardPaymentRequest().amountInCents(1_000_000_000L).method("credit_card").cardToken("tok_visa");
    Answer first = ok(call("POST", "/v1/payments", card, sk, key, null));
    Answer replay = ok(call("POST", "/v1/payments", card, sk, key, null));
    Payment payment = first.as(Payment.class);
    check(replay.as(Payment.class).getId().equals(payment.getId()) && "true".equals(replay.raw().headers().firstValue("idempotent-replayed").orElse("")), "card payment " + payment.getId() + " replayed with the same key");
    Payment approved = poll(payment.getId(), sk);
    check(approved.getStatus() == Payment.StatusEnum.APPROVED && approved.getAmount() == 1_000_000_000L, "card payment approved, R$ 10.000.000,00 (was " + payment.getStatus() + ")");
    ReceivableList receivables = ok(call("GET", "/v1/receivables?paymentId=" + payment.getId(), null, sk, null, null)).as(ReceivableList.class);
    check(receivables.getData().stream().anyMatch(r -> recipient.getId().equals(r.getPayee().getId())), "the sale was split: a receivable for the recipient");

    // Two more: the balance passes 2^31 centavos, which a 32-bit integer cannot hold.
    for (int i = 0; i < 2; i++) poll(ok(call("POST", "/v1/payments", card, sk, "order-" + UUID.randomUUID(), null)).as(Payment.class).getId(), sk);
    Balance balance = ok(call("GET", "/v1/balance", null, sk, null, null)).as(Balance.class);
    long total = balance.getMerchant().getPending() + balance.getMerchant().getAvailable() + balance.getRecipients().stream().mapToLong(r -> r.getPending() + r.getAvailable()).sum();
    check(total > Integer.MAX_VALUE, "balance of " + total + " centavos parses (over 2^31)");

    // A Pix payment, paid in the sandbox, polled until approved.
    Payment pix = ok(call("POST", "/v1/payments", new PixPaymentInCentsRequest().amountInCents(1050L).method("pix"), sk, "pix-" + UUID.randomUUID(), null)).as(Payment.class);
    check(pix.getPix().isPresent() && pix.getPix().get().getCopyPaste().startsWith("000201"), "Pix payment " + pix.getId() + " with its BR Code");
    ok(call("POST", "/v1/sandbox/payments/" + pix.getId() + "/pay", null, sk, null, null));
    pix = poll(pix.getId(), sk);
    check(pix.getStatus() == Payment.StatusEnum.APPROVED, "Pix payment approved");

    // A list with a date filter, as OffsetDateTime prints a whole minute (2026-11-28T07:00Z).
    String since = payment.getCreatedAt().truncatedTo(ChronoUnit.MINUTES).toString();
    PaymentList page = ok(call("GET", "/v1/payments?limit=100&createdGte=" + since, null, sk, null, null)).as(PaymentList.class);
    check(since.length() == 17 && page.getData().stream().anyMatch(p -> p.getId().equals(payment.getId())), "listed with createdGte=" + since);

    // A request check: the server refuses, the envelope says why.
    Answer refused = call("POST", "/v1/payments", new CardPaymentRequest().amountInCents(2500L).method("credit_card").cardToken("not a token"), sk, "bad-" + UUID.randomUUID(), null);
    ErrorResponse error = JSON.readValue(refused.body(), ErrorResponse.class);
    check(refused.status() == 400 && error.getError().getCode() == ErrorBody.CodeEnum.VALIDATION_ERROR && "cardToken".equals(error.getError().getParam())
        && error.getError().getCorrelationId().startsWith("req_"), "refused: " + error.getError().getCode() + " on " + error.getError().getParam() + " (" + error.getError().getCorrelationId() + ")");
    System.out.println("java: all checks passed");
  }
}
