/**
 * What the mails say (platform/mail/render.ts). Each kind of mail has `.subject`, `.intro` and `.outro`;
 * `{product}` is the environment's product name. Keys are prefixed with 'mail.'; da is typed by en's keys.
 */
export const en = {
  'mail.footer': 'Sent by {product}.',
  'mail.linkFallback': 'If the button does not work, open this link:',

  'mail.verifyEmail.subject': 'Your verification code is {code}',
  'mail.verifyEmail.intro': 'Enter this code to finish signing up to {product}:',
  'mail.verifyEmail.outro': 'It expires in 10 minutes. If you did not sign up, ignore this email.',

  'mail.resetPassword.subject': 'Your password reset code is {code}',
  'mail.resetPassword.intro': 'Enter this code to choose a new password for your {product} account:',
  'mail.resetPassword.outro': 'It expires in 10 minutes. If you did not ask to reset your password, ignore this email; your password stays as it is.',

  'mail.emailAddressCode.subject': 'Your email verification code is {code}',
  'mail.emailAddressCode.intro': 'Enter this code to add {email} to your {product} account:',
  'mail.emailAddressCode.outro': 'It expires in 10 minutes. If you did not ask to add this address to an account, ignore this email: nothing changes without the code.',

  'mail.passwordReset.subject': 'Your password was changed',
  'mail.passwordReset.intro': 'The password of your {product} account {email} was changed at {time} with a reset code sent to this address, and every session was signed out.',
  'mail.passwordReset.outro': 'If you did not do this, ask for a new reset code at once and tell your administrator.',

  'mail.dataExportReady.subject': 'Your {product} data export is ready',
  'mail.dataExportReady.intro': 'The export of your {product} data that you asked for is ready. You can download it until {expires}.',
  'mail.dataExportReady.outro': 'If you did not ask for it, change your password and tell your administrator.',
  'mail.dataExportReady.action': 'Open your data',
  'mail.passwordChanged.subject': 'Your password was changed',
  'mail.passwordChanged.intro': 'The password of your {product} account {email} was changed at {time} from a signed-in session.',
  'mail.passwordChanged.outro': 'If you did not do this, reset your password at once and tell your administrator.',

  'mail.passwordChangedOthersSignedOut.subject': 'Your password was changed',
  'mail.passwordChangedOthersSignedOut.intro': 'The password of your {product} account {email} was changed at {time} from a signed-in session, and every other session was signed out.',
  'mail.passwordChangedOthersSignedOut.outro': 'If you did not do this, reset your password at once and tell your administrator.',

  'mail.ssoAccountLinked.subject': 'Your account now signs in through {organization}',
  'mail.ssoAccountLinked.intro': "Your {product} account {email} was linked at {time} to {organization}'s single sign-on: signing in as {email} at {organization}'s identity provider now signs in to this account. Every session signed in before was signed out.",
  'mail.ssoAccountLinked.outro': 'If you did not expect this, tell your administrator at once.',

  'mail.accountExists.subject': 'You already have an account',
  'mail.accountExists.intro': 'Someone tried to sign up to {product} with {email}, which already has an account. If it was you, sign in, or reset your password if you forgot it.',
  'mail.accountExists.outro': 'If it was not you, you can ignore this email: nothing changed.',

  'mail.invitation.subject': "You're invited to join {product}",
  'mail.invitation.intro': 'You have been invited to join {product}.',
  'mail.invitation.action': 'Create your account',
  'mail.invitation.outro': 'The invitation expires on {expires}. If you were not expecting it, ignore this email.',

  'mail.organizationInvitation.subject': "You're invited to join {organization}",
  'mail.organizationInvitation.intro': 'You have been invited to join {organization} on {product} as {role}.',
  'mail.organizationInvitation.action': 'Accept the invitation',
  'mail.organizationInvitation.outro': 'The invitation expires on {expires}. If you were not expecting it, ignore this email.',
};

export const da: Record<keyof typeof en, string> = {
  'mail.footer': 'Sendt af {product}.',
  'mail.linkFallback': 'Hvis knappen ikke virker, så åbn dette link:',

  'mail.verifyEmail.subject': 'Din bekræftelseskode er {code}',
  'mail.verifyEmail.intro': 'Indtast denne kode for at gøre din tilmelding til {product} færdig:',
  'mail.verifyEmail.outro': 'Den udløber om 10 minutter. Hvis du ikke har tilmeldt dig, kan du se bort fra denne e-mail.',

  'mail.resetPassword.subject': 'Din kode til nulstilling af adgangskode er {code}',
  'mail.resetPassword.intro': 'Indtast denne kode for at vælge en ny adgangskode til din konto hos {product}:',
  'mail.resetPassword.outro': 'Den udløber om 10 minutter. Hvis du ikke har bedt om at nulstille din adgangskode, kan du se bort fra denne e-mail; din adgangskode forbliver den samme.',

  'mail.emailAddressCode.subject': 'Din kode til bekræftelse af e-mailadressen er {code}',
  'mail.emailAddressCode.intro': 'Indtast denne kode for at tilføje {email} til din konto hos {product}:',
  'mail.emailAddressCode.outro': 'Den udløber om 10 minutter. Hvis du ikke har bedt om at tilføje denne adresse til en konto, kan du se bort fra denne e-mail: intet ændres uden koden.',

  'mail.passwordReset.subject': 'Din adgangskode er blevet ændret',
  'mail.passwordReset.intro': 'Adgangskoden til din konto {email} hos {product} blev ændret {time} med en nulstillingskode sendt til denne adresse, og alle sessioner blev logget ud.',
  'mail.passwordReset.outro': 'Hvis det ikke var dig, så bed straks om en ny nulstillingskode og giv din administrator besked.',

  'mail.dataExportReady.subject': 'Din dataeksport fra {product} er klar',
  'mail.dataExportReady.intro': 'Eksporten af dine data hos {product}, som du bad om, er klar. Du kan hente den indtil {expires}.',
  'mail.dataExportReady.outro': 'Hvis du ikke har bedt om den, så skift din adgangskode og giv din administrator besked.',
  'mail.dataExportReady.action': 'Åbn dine data',
  'mail.passwordChanged.subject': 'Din adgangskode er blevet ændret',
  'mail.passwordChanged.intro': 'Adgangskoden til din konto {email} hos {product} blev ændret {time} fra en session, der var logget ind.',
  'mail.passwordChanged.outro': 'Hvis det ikke var dig, så nulstil straks din adgangskode og giv din administrator besked.',

  'mail.passwordChangedOthersSignedOut.subject': 'Din adgangskode er blevet ændret',
  'mail.passwordChangedOthersSignedOut.intro': 'Adgangskoden til din konto {email} hos {product} blev ændret {time} fra en session, der var logget ind, og alle andre sessioner blev logget ud.',
  'mail.passwordChangedOthersSignedOut.outro': 'Hvis det ikke var dig, så nulstil straks din adgangskode og giv din administrator besked.',

  'mail.ssoAccountLinked.subject': 'Din konto logger nu ind via {organization}',
  'mail.ssoAccountLinked.intro': 'Din konto {email} hos {product} blev {time} knyttet til single sign-on hos {organization}: den, der logger ind som {email} hos {organization}s identitetsudbyder, logger nu ind på denne konto. Alle sessioner, der var logget ind før, blev logget ud.',
  'mail.ssoAccountLinked.outro': 'Hvis du ikke ventede dette, så giv straks din administrator besked.',

  'mail.accountExists.subject': 'Du har allerede en konto',
  'mail.accountExists.intro': 'Nogen forsøgte at tilmelde sig {product} med {email}, som allerede har en konto. Hvis det var dig, så log ind, eller nulstil din adgangskode, hvis du har glemt den.',
  'mail.accountExists.outro': 'Hvis det ikke var dig, kan du se bort fra denne e-mail: intet er ændret.',

  'mail.invitation.subject': 'Du er inviteret til {product}',
  'mail.invitation.intro': 'Du er blevet inviteret til {product}.',
  'mail.invitation.action': 'Opret din konto',
  'mail.invitation.outro': 'Invitationen udløber {expires}. Hvis du ikke ventede den, kan du se bort fra denne e-mail.',

  'mail.organizationInvitation.subject': 'Du er inviteret til {organization}',
  'mail.organizationInvitation.intro': 'Du er blevet inviteret til {organization} hos {product} som {role}.',
  'mail.organizationInvitation.action': 'Tag imod invitationen',
  'mail.organizationInvitation.outro': 'Invitationen udløber {expires}. Hvis du ikke ventede den, kan du se bort fra denne e-mail.',
};
