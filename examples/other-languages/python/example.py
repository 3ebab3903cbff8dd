"""The flow of docs/other-languages.md in Python, with the client that OpenAPI Generator 5
(the jar inside the npm package @openapitools/openapi-generator-cli@1.0.18-5.0.0-beta2) generated
from /v1/openapi-3.0.json. Run by `npm run test:clients` (examples/other-languages) against a
running server; any surprise is an exception and a non-zero exit."""
import datetime
import os
import time
import uuid

import pagamentos_client
from pagamentos_client.models import (
    AdminLoginRequest, BankAccount, CardPaymentRequest, CreateRecipientRequest,
    CreateSplitRuleRequest, PercentageSplitShareRequest, PixPaymentInCentsRequest, SandboxAccountRequest,
)
from pagamentos_client.rest import ApiException

BASE = os.environ["PAGAMENTOS_URL"]


def check(ok, what):
    if not ok:
        raise SystemExit("failed: " + what)
    print("ok - " + what)


# Sign-up needs no key. Then the secret key (sk_test_) is the bearer token of every
# server-side call: `access_token` (one token for the document's three bearer schemes: the
# secret key on your server; a publishable key or a checkout client secret only in a browser).
def configuration(token=None):
    config = pagamentos_client.Configuration(host=BASE)
    # This generator's Configuration takes no access_token argument and leaves the attribute
    # unset (its auth_settings then fails): set it, None included.
    config.access_token = token
    return config


# This generator flattens a oneOf (SplitShare) into one class that requires the fields of every
# branch, and its models check themselves with a fresh Configuration(): turn its client-side
# checks off for good (the server checks every request, and answers VALIDATION_ERROR naming
# the field).
_configuration_init = pagamentos_client.Configuration.__init__


def _configuration_init_unchecked(self, *args, **kwargs):
    _configuration_init(self, *args, **kwargs)
    self.client_side_validation = False


pagamentos_client.Configuration.__init__ = _configuration_init_unchecked


anonymous = pagamentos_client.ApiClient(configuration())
account = pagamentos_client.SandboxApi(anonymous).create_sandbox_account(sandbox_account_request=SandboxAccountRequest(name="Loja Python"))
sk = account.keys.secret_key.key
check(sk.startswith("sk_test_"), "signed up: secret key " + sk[:8] + "...")
api = pagamentos_client.ApiClient(configuration(sk))
payments = pagamentos_client.PaymentsApi(api)


def poll(payment_id):
    payment = payments.get_payment(payment_id)
    for _ in range(200):
        if payment.status != "pending":
            break
        time.sleep(0.1)
        payment = payments.get_payment(payment_id)
    return payment


# A recipient, and a split rule for it through the admin API: the session cookie that sign-in
# sets, and its CSRF token on every change.
recipient = pagamentos_client.RecipientsApi(api).create_recipient(
    CreateRecipientRequest(name="Vendedor Python", document="11.222.333/0001-81",
                           bank_account=BankAccount(bank_code="341", agency="0001", account="12345-6", account_type="checking")),
    idempotency_key="rcp-" + str(uuid.uuid4()))
# (This generator sends a cookie API key without its name: give the client the cookie whole.)
admin_client = pagamentos_client.ApiClient(configuration())
admin = pagamentos_client.AdminApi(admin_client)
session, _, headers = admin.admin_create_session_with_http_info(AdminLoginRequest(email=os.environ["ADMIN_EMAIL"], password=os.environ["ADMIN_PASSWORD"]))
admin_client.cookie = headers["Set-Cookie"].split(";")[0]
created = admin.admin_create_split_rule(session.csrf_token, CreateSplitRuleRequest(
    account_id=account.account.id, priority=10, reason="Contrato Python",
    splits=[PercentageSplitShareRequest(recipient_id=recipient.id, percentage=30)]))
rule = admin.admin_get_split_rule(created.id)
share = rule.splits[0]
check(share.type == "percentage" and share.percentage == 30 and share.recipient_id == recipient.id, "split rule read back: type percentage, 30%")

# A card payment with an idempotency key, and its replay.
key = "order-" + str(uuid.uuid4())
card = CardPaymentRequest(amount_in_cents=1_000_000_000, method="credit_card", card_token="tok_visa")
first = payments.create_payment(card, idempotency_key=key)
replay, _, replay_headers = payments.create_payment_with_http_info(card, idempotency_key=key)
check(replay.id == first.id and replay_headers.get("Idempotent-Replayed") == "true", "card payment %s replayed with the same key" % first.id)
approved = poll(first.id)
check(approved.status == "approved" and approved.amount == 1_000_000_000, "card payment approved, R$ 10.000.000,00")
receivables = pagamentos_client.ReceivablesApi(api).list_receivables(payment_id=first.id)
check(any(r.payee.id == recipient.id for r in receivables.data), "the sale was split: a receivable for the recipient")

# Two more: the balance passes 2^31 centavos.
for _ in range(2):
    poll(payments.create_payment(card, idempotency_key="order-" + str(uuid.uuid4())).id)
balance = pagamentos_client.BalanceApi(api).get_balance()
total = balance.merchant.pending + balance.merchant.available + sum(r.pending + r.available for r in balance.recipients)
check(total > 2**31, "balance of %d centavos (over 2^31)" % total)

# A Pix payment, paid in the sandbox, polled until approved.
pix = payments.create_payment(PixPaymentInCentsRequest(amount_in_cents=1050, method="pix"), idempotency_key="pix-" + str(uuid.uuid4()))
check(pix.pix.copy_paste.startswith("000201"), "Pix payment %s with its BR Code" % pix.id)
pagamentos_client.SandboxApi(api).sandbox_pay_pix_payment(pix.id)
check(poll(pix.id).status == "approved", "Pix payment approved")

# A list with a date filter: a whole minute, as many clients print it.
since = approved.created_at.replace(second=0, microsecond=0).astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
page = payments.list_payments(limit=100, created_gte=since)
check(any(p.id == first.id for p in page.data), "listed with created_gte=" + since)

# A request check: the server refuses, the envelope says why.
try:
    payments.create_payment(CardPaymentRequest(amount_in_cents=2500, method="credit_card", card_token="not a token"), idempotency_key="bad-" + str(uuid.uuid4()))
    raise SystemExit("failed: a bad card token was accepted")
except ApiException as e:
    error = api.deserialize(type("R", (), {"data": e.body})(), "ErrorResponse").error
    check(e.status == 400 and error.code == "VALIDATION_ERROR" and error.param == "cardToken" and error.correlation_id.startswith("req_"),
          "refused: %s on %s (%s)" % (error.code, error.param, error.correlation_id))
print("python: all checks passed")
