package example;

import br.com.minhaloja.pagamentos.model.*;
import br.com.minhaloja.pagamentos.params.*;
import br.com.minhaloja.pagamentos.spec.*;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.jaxrs.json.JacksonJsonProvider;
import java.math.BigDecimal;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.UUID;
import javax.ws.rs.BadRequestException;
import javax.ws.rs.client.ClientRequestContext;
import javax.ws.rs.client.ClientRequestFilter;
import javax.ws.rs.client.ClientResponseContext;
import javax.ws.rs.client.ClientResponseFilter;
import javax.ws.rs.core.HttpHeaders;
import org.jboss.resteasy.client.jaxrs.ResteasyClientBuilder;
import org.jboss.resteasy.client.jaxrs.ResteasyWebTarget;
import org.jboss.resteasy.client.jaxrs.engines.ApacheHttpClient4Engine;
import org.apache.http.impl.client.HttpClientBuilder;

// The flow of docs/other-languages.md in Java, through the JAX-RS interfaces that
// openapi-generator-plus generated from /v1/openapi.json (PaymentsApiSpec, AdminApiSpec, ...),
// implemented by RESTEasy's client proxies (Debian's libresteasy3.0-java), with Jackson.
// Run by `npm run test:clients` (examples/other-languages) against a running server; any
// surprise is an exception and a non-zero exit.
public final class Main {
  // The secret key (sk_test_... / sk_live_...) as the bearer token of every call: a client for /v1.
  static final class SecretKey implements ClientRequestFilter {
    private final String key;
    SecretKey(String key) { this.key = key; }
    @Override public void filter(ClientRequestContext request) {
      request.getHeaders().putSingle(HttpHeaders.AUTHORIZATION, "Bearer " + key);
    }
  }

  // The admin API takes no key: POST /admin/session sets the `admin_session` cookie, which goes
  // back on every later call (the document declares it as a cookie API key, which the generated
  // methods have no parameter for). The CSRF token is a parameter of every change (xCsrfToken).
  // The Set-Cookie header is read as text: RESTEasy 3.0's getCookies() takes its SameSite
  // attribute for the cookie.
  static final class AdminSession implements ClientRequestFilter, ClientResponseFilter {
    private volatile String cookie;
    @Override public void filter(ClientRequestContext request) {
      if (cookie != null) request.getHeaders().putSingle(HttpHeaders.COOKIE, cookie);
    }
    @Override public void filter(ClientRequestContext request, ClientResponseContext response) {
      for (String set : response.getHeaders().getOrDefault(HttpHeaders.SET_COOKIE, List.of())) {
        if (set.startsWith("admin_session=")) cookie = set.split(";", 2)[0];
      }
    }
  }

  // The generated methods return the body only: the response's Idempotent-Replayed header is
  // read here.
  static final class Replayed implements ClientResponseFilter {
    volatile boolean last;
    @Override public void filter(ClientRequestContext request, ClientResponseContext response) {
      last = "true".equals(response.getHeaderString("Idempotent-Replayed"));
    }
  }

  // One JAX-RS client per credential; `proxy` implements any generated *ApiSpec interface.
  // RESTEasy's engine is Apache HttpClient, here without its cookie store: what a call sends
  // comes from the filters alone, as with any other JAX-RS client.
  static ResteasyWebTarget api(String base, Object... filters) {
    ResteasyClientBuilder builder = new ResteasyClientBuilder()
        .httpEngine(new ApacheHttpClient4Engine(HttpClientBuilder.create().disableCookieManagement().build(), true));
    builder.register(new JacksonJsonProvider(Json.mapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true)));
    for (Object filter : filters) builder.register(filter);
    return builder.build().target(base);
  }

  static void check(boolean ok, String what) {
    if (!ok) throw new IllegalStateException("failed: " + what);
    System.out.println("ok - " + what);
  }

  // Polls a payment until it leaves `pending` (at most 20 s).
  static Payment poll(PaymentsApiSpec payments, String id) throws InterruptedException {
    Payment p = payments.getPayment(id);
    for (int i = 0; i < 200 && p.getStatus() == Payment.StatusEnum.PENDING; i++) {
      Thread.sleep(100);
      p = payments.getPayment(id);
    }
    return p;
  }

  public static void main(String[] args) throws Exception {
    String base = System.getenv("PAGAMENTOS_URL");
    String adminEmail = System.getenv("ADMIN_EMAIL"), adminPassword = System.getenv("ADMIN_PASSWORD");

    // Sandbox sign-up takes no key; it answers the account's keys.
    SandboxAccount account = api(base).proxy(SandboxApiSpec.class).createSandboxAccount(new SandboxAccountRequest().name("Loja Java"));
    String sk = account.getKeys().getSecretKey().getKey();
    check(sk.startsWith("sk_test_"), "signed up: secret key " + sk.substring(0, 8) + "...");

    // Every server-side call takes the secret key.
    Replayed replayed = new Replayed();
    ResteasyWebTarget merchant = api(base, new SecretKey(sk), replayed);
    PaymentsApiSpec payments = merchant.proxy(PaymentsApiSpec.class);
    SandboxApiSpec sandbox = merchant.proxy(SandboxApiSpec.class);

    // A recipient, and a split rule for it made through the admin API (session cookie + CSRF token).
    Recipient recipient = merchant.proxy(RecipientsApiSpec.class).createRecipient("rcp-" + UUID.randomUUID(), new CreateRecipientRequest()
        .name("Vendedor Java").document("11.222.333/0001-81")
        .bankAccount(new BankAccount().bankCode("341").agency("0001").account("12345-6").accountType(BankAccount.AccountTypeEnum.CHECKING)));
    AdminApiSpec admin = api(base, new AdminSession()).proxy(AdminApiSpec.class);
    String csrf = admin.adminCreateSession(new AdminLoginRequest().email(adminEmail).password(adminPassword)).getCsrfToken();
    SplitRule created = admin.adminCreateSplitRule(new AdminCreateSplitRuleParams().xCsrfToken(csrf).idempotencyKey("spr-" + UUID.randomUUID()),
        new CreateSplitRuleRequest().accountId(account.getAccount().getId()).priority(10).reason("Contrato Java")
            .splits(List.of(new PercentageSplitShareRequest().recipientId(recipient.getId()).percentage(new BigDecimal("30")))));
    SplitShare share = admin.adminGetSplitRule(created.getId()).getSplits().get(0);
    check(share instanceof PercentageSplitShare && ((PercentageSplitShare) share).getPercentage().compareTo(new BigDecimal("30")) == 0,
        "split rule read back: a PercentageSplitShare of 30% (discriminator `type`)");

    // A card payment with an idempotency key, and its replay.
    String key = "order-" + UUID.randomUUID();
    CardPaymentRequest card = new CardPaymentRequest().amountInCents(1_000_000_000L).method("credit_card").cardToken("tok_visa");
    Payment payment = payments.createPayment(key, card);
    check(!replayed.last, "card payment " + payment.getId() + " created");
    Payment replay = payments.createPayment(key, card);
    check(replay.getId().equals(payment.getId()) && replayed.last, "replayed with the same key: the same payment, Idempotent-Replayed: true");
    Payment approved = poll(payments, payment.getId());
    check(approved.getStatus() == Payment.StatusEnum.APPROVED && approved.getAmount() == 1_000_000_000L, "card payment approved, R$ 10.000.000,00 (was " + payment.getStatus() + ")");
    ReceivableList receivables = merchant.proxy(ReceivablesApiSpec.class).listReceivables(new ListReceivablesParams().paymentId(payment.getId()));
    check(receivables.getData().stream().anyMatch(r -> recipient.getId().equals(r.getPayee().getId())), "the sale was split: a receivable for the recipient");

    // Two more: the balance passes 2^31 centavos, which a 32-bit integer cannot hold.
    for (int i = 0; i < 2; i++) poll(payments, payments.createPayment("order-" + UUID.randomUUID(), card).getId());
    Balance balance = merchant.proxy(BalanceApiSpec.class).getBalance();
    long total = balance.getMerchant().getPending() + balance.getMerchant().getAvailable() + balance.getRecipients().stream().mapToLong(r -> r.getPending() + r.getAvailable()).sum();
    check(total > Integer.MAX_VALUE, "balance of " + total + " centavos parses (over 2^31)");

    // A Pix payment, paid in the sandbox, polled until approved.
    Payment pix = payments.createPayment("pix-" + UUID.randomUUID(), new PixPaymentInCentsRequest().amountInCents(1050L).method("pix"));
    check(pix.getPix().isPresent() && pix.getPix().get().getCopyPaste().startsWith("000201"), "Pix payment " + pix.getId() + " with its BR Code");
    sandbox.sandboxPayPixPayment(new SandboxPayPixPaymentParams().id(pix.getId()).idempotencyKey("paid-" + pix.getId()));
    check(poll(payments, pix.getId()).getStatus() == Payment.StatusEnum.APPROVED, "Pix payment approved");

    // A list with a date filter, as OffsetDateTime prints a whole minute (2026-11-28T07:00Z).
    OffsetDateTime since = payment.getCreatedAt().truncatedTo(ChronoUnit.MINUTES);
    PaymentList page = payments.listPayments(new ListPaymentsParams().limit(100).createdGte(since));
    check(since.toString().length() == 17 && page.getData().stream().anyMatch(p -> p.getId().equals(payment.getId())), "listed with createdGte=" + since);

    // A request check: the server refuses (400, a BadRequestException), the envelope says why.
    try {
      payments.createPayment("bad-" + UUID.randomUUID(), new CardPaymentRequest().amountInCents(2500L).method("credit_card").cardToken("not a token"));
      check(false, "a card token that is not one is refused");
    } catch (BadRequestException refused) {
      ErrorBody error = refused.getResponse().readEntity(ErrorResponse.class).getError();
      check(error.getCode() == ErrorBody.CodeEnum.VALIDATION_ERROR && "cardToken".equals(error.getParam()) && error.getCorrelationId().startsWith("req_"),
          "refused: " + error.getCode() + " on " + error.getParam() + " (" + error.getCorrelationId() + ")");
    }
    System.out.println("java: all checks passed");
  }
}
