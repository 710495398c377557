/**
 * The words of prompt injections in the languages the detector reads (shared/trust/injection.ts),
 * kept as data apart from the matching: each entry is a pattern over the NFKC-folded, lower-case
 * view of a text (scripts kept), and a new language is a new line here. Languages: English, Dutch,
 * German, French, Spanish, Portuguese, Italian, Russian, Chinese, Japanese and Korean.
 *
 * Only what the structure of a text cannot show is here: whether a sentence asks to keep something
 * from the user, or to drop the agent's rules, or claims an authority. Structure (a role line, a
 * chat-markup token, a download that reaches an interpreter) is matched in the detector itself.
 *
 * Every pattern is linear in the text: alternations of fixed words, gaps bounded by a fixed count.
 */

/**
 * Secrecy toward the user with no object named: "no need to bring it up", "don't mention this",
 * "niet melden", "ohne es zu erwähnen". From a tool or a relayed text, words like these ask the
 * agent to hide what it does; the user saying them to the agent ("don't mention it in the commit")
 * is ordinary, so the detector reads them only outside the user's own words.
 */
export const BARE_SECRECY: readonly RegExp[] = [
  // English.
  /\bno\s+need\s+to\s+(?:bring\s+(?:it|this|that)\s+up|mention|tell|report|inform|say\s+anything|bother\s+the\s+user|let\s+(?:them|anyone)\s+know)\b/,
  /\b(?:do\s+not|don't|dont|never|must\s+not|should\s+not)\s+(?:bring\s+(?:it|this|that)\s+up|mention\s+(?:it|this|that|any\s+of\s+this|the\s+(?:download|script|command|step))(?!\s+(?:in|on)\s+(?:the\s+|your\s+)?(?:changelog|commit|docs?|readme|pr\b|pull|title|release))|report\s+(?:it|this|back)|say\s+anything(?:\s+about)?|tell\s+anyone|show\s+(?:the\s+)?(?:output|this|it)\s+to)\b/,
  /\b(?:without|w\/o)\s+(?:mentioning|saying|reporting|showing|announcing)\s+(?:it|this|that|anything)\b/,
  /\b(?:keep|leave)\s+(?:it|this|that)\s+out\s+of\s+(?:your|the)\s+(?:reply|answer|response|summary|report|output|messages?)\b/,
  /\b(?:the\s+)?user\s+(?:does\s+not|doesn't|need\s+not|needn't|won't)\s+(?:need\s+to\s+)?(?:know|see|be\s+told|notice)\b/,
  /\b(?:keep\s+(?:it|this)\s+(?:quiet|between\s+us|confidential|to\s+yourself)|just\s+between\s+us)\b/,
  // Dutch.
  /\b(?:niet|nooit)\s+(?:te\s+)?(?:melden|vermelden|noemen|vertellen|zeggen|laten\s+zien|rapporteren|aankaarten|ter\s+sprake\s+brengen)\b/,
  /\b(?:hoeft|hoef|hoeven)\s+(?:je\s+|u\s+|de\s+gebruiker\s+|niemand\s+)?(?:dit\s+|het\s+|dat\s+)?niet\s+(?:te\s+)?(?:weten|melden|vermelden|noemen|vertellen|zeggen)\b/,
  /\bzonder\s+(?:het\s+|dit\s+|iets\s+)?(?:te\s+)?(?:melden|vermelden|zeggen|vertellen|laten\s+weten)\b/,
  /\b(?:vertel|meld|zeg|noem)\s+(?:het\s+|dit\s+|dat\s+|niets\s+)?(?:aan\s+)?(?:de\s+gebruiker\s+|niemand\s+)?(?:niet|niets)\b/,
  // German.
  /\b(?:nicht|niemals|keinesfalls)\s+(?:zu\s+)?(?:erwähnen|melden|sagen|mitteilen|berichten|anzeigen|zeigen)\b/,
  /\bohne\s+(?:es\s+|das\s+|dies\s+|etwas\s+)?(?:zu\s+)?(?:erwähnen|melden|sagen|mitzuteilen|berichten)\b/,
  /\b(?:erwähne|melde|sag|sage|zeige)\s+(?:es|das|dies|nichts)\s+(?:niemandem|nicht)\b/,
  /\b(?:muss|braucht)\s+(?:der\s+(?:nutzer|benutzer|anwender)|niemand)\s+(?:nicht\s+|nichts\s+)?(?:zu\s+)?(?:wissen|erfahren)\b/,
  // French.
  /\bsans\s+(?:le\s+|en\s+)?(?:mentionner|signaler|dire|prévenir|avertir|parler)\b/,
  /\bne\s+(?:le\s+|l'|en\s+)?(?:mentionnez|mentionne|signalez|signale|dites|dis|parlez|parle)\s+(?:pas|rien|jamais)\b/,
  /\b(?:inutile|pas\s+besoin)\s+d[e']\s*(?:le\s+|en\s+)?(?:mentionner|signaler|dire|parler|prévenir)\b/,
  // Spanish.
  /\bsin\s+(?:mencionarlo|decirlo|avisar|informar|comentarlo|mencionar\s+nada|decir\s+nada)\b/,
  /\bno\s+(?:lo\s+|le\s+)?(?:menciones|mencione|digas|diga|comentes|informes|reportes)\b/,
  /\bno\s+(?:hace\s+falta|es\s+necesario)\s+(?:mencionarlo|decirlo|avisar|informar|comentarlo)\b/,
  // Portuguese.
  /\bsem\s+(?:mencionar|avisar|contar|dizer|informar|comentar)\b/,
  /\bnão\s+(?:o\s+)?(?:mencione|diga|conte|informe|comente|relate)\b/,
  /\bnão\s+(?:precisa|é\s+preciso|é\s+necessário)\s+(?:de\s+)?(?:mencionar|dizer|avisar|contar|informar)\b/,
  // Italian.
  /\bsenza\s+(?:dirlo|menzionarlo|avvisare|segnalarlo|dire\s+nulla|informare)\b/,
  /\bnon\s+(?:dirlo|menzionarlo|segnalarlo|dire\s+nulla|parlarne)\b/,
  /\bnon\s+(?:c'è\s+bisogno|serve|è\s+necessario)\s+(?:di\s+)?(?:dirlo|menzionarlo|segnalarlo|avvisare)\b/,
  // Russian.
  /(?:не|никому\s+не)\s+(?:говори|говорите|сообщай|сообщайте|упоминай|упоминайте|рассказывай|показывай)/,
  /без\s+(?:уведомления|упоминания|предупреждения|ведома)/,
  /не\s+(?:нужно|надо|стоит)\s+(?:об\s+этом\s+)?(?:говорить|сообщать|упоминать)/,
  // Chinese.
  /(?:不要|别|不必|无需|無需|不用|切勿)(?:告诉|告訴|提及|提到|透露|说出|說出|通知|报告|報告|声张|聲張)/,
  /(?:悄悄|偷偷|暗中|私下)(?:地)?(?:执行|執行|运行|運行|下载|下載|安装|安裝|发送|發送)/,
  // Japanese.
  /(?:言わ|伝え|知らせ|教え|報告し|触れ|話さ)ないで/,
  /(?:内緒|黙って|こっそり|秘密に)/,
  // Korean.
  /(?:말하지|알리지|언급하지|보고하지)\s*(?:마|말)/,
];

/**
 * Orders to drop the agent's rules, beyond the phrasings the detector's own patterns know: Dutch
 * and the forms of other languages those miss ("negeer alle eerdere instructies").
 */
export const OVERRIDE: readonly RegExp[] = [
  // Dutch.
  /\b(?:negeer|vergeet|negeren|vergeten)\s+(?:alle\s+|al\s+)?(?:de\s+|je\s+|jouw\s+|uw\s+)?(?:eerdere|vorige|voorgaande|bovenstaande|oorspronkelijke|huidige|systeem)\s*(?:instructies|opdrachten|regels|richtlijnen|aanwijzingen|prompt)/,
  /\bnieuwe\s+(?:instructies|opdracht|regels)\s*:/,
  // German, French, Spanish, Portuguese, Italian: "new instructions:".
  /\b(?:neue\s+anweisungen|nouvelles\s+instructions|nuevas\s+instrucciones|novas\s+instruções|nuove\s+istruzioni)\s*:/,
  // Italian: "ignora le istruzioni precedenti" without "tutte".
  /\b(?:ignora|dimentica)\s+(?:tutte\s+)?le\s+(?:istruzioni|regole)\s+(?:precedenti|di\s+sistema)/,
  // Russian: "new instructions:".
  /новые\s+инструкции\s*:/,
];

/**
 * A claimed authority: text that says who orders or allows what follows ("the administrator has
 * authorized", "message from the system", "de beheerder zegt"). Read outside the user's own words:
 * a tool result or a relayed text has no authority over the agent, so one that claims it is
 * posing as a role.
 */
export const AUTHORITY: readonly RegExp[] = [
  // English.
  /\b(?:the|your|our)\s+(?:user|developer|administrator|admin|sysadmin|operator|owner|maintainers?|security\s+team|it\s+department|system)\s+(?:has\s+(?:already\s+)?(?:authori[sz]ed|approved|pre-?approved|granted|allowed|requested|instructed)|(?:says|insists|requires|instructs|orders|wants)\s+(?:that\s+)?you\b|wants\s+you\s+to|asks\s+you\s+to|told\s+you\s+to)/,
  /\b(?:anthropic|openai|google|microsoft|github|the\s+system)\s+(?:says|requires|instructs|has\s+authori[sz]ed|policy\s+requires|wants\s+you)\b/,
  /\b(?:message|instructions?|orders?|notice|directive|update)\s+from\s+(?:the\s+)?(?:system|administrator|admin|developers?|anthropic|openai|operator|security\s+team)\b/,
  /\b(?:authori[sz]ed|approved|sanctioned)\s+by\s+(?:the\s+)?(?:user|administrator|admin|developers?|anthropic|openai|operator|owner)\b/,
  // Dutch.
  /\bde\s+(?:gebruiker|beheerder|systeembeheerder|ontwikkelaar|eigenaar|beveiligingsafdeling)\s+(?:heeft\s+(?:al\s+)?(?:toestemming\s+gegeven|goedgekeurd|gevraagd|opgedragen)|zegt\s+dat\s+je|wil\s+dat\s+je|vraagt\s+je)/,
  /\bbericht\s+van\s+(?:de\s+)?(?:beheerder|systeem|ontwikkelaar|beveiligingsafdeling)\b/,
  // German.
  /\b(?:der|die)\s+(?:nutzer|benutzer|administrator|admin|entwickler|betreiber|eigentümer)\s+(?:hat\s+(?:bereits\s+)?(?:genehmigt|autorisiert|erlaubt|angeordnet)|sagt,?\s+dass\s+du|möchte,?\s+dass\s+du|verlangt)/,
  /\bnachricht\s+(?:vom|von\s+der|des)\s+(?:system|administrator|admin|entwickler)/,
  // French.
  /\bl'(?:utilisateur|administrateur|développeur|opérateur)\s+(?:a\s+(?:déjà\s+)?(?:autorisé|approuvé|demandé)|(?:dit|demande|exige|veut)\s+que\s+(?:tu|vous))/,
  /\bmessage\s+(?:du\s+système|de\s+l'administrateur|du\s+développeur)/,
  // Spanish.
  /\bel\s+(?:usuario|administrador|desarrollador|operador)\s+(?:ya\s+)?(?:ha\s+(?:autorizado|aprobado|pedido)|autorizó|aprobó|(?:dice|pide|exige|quiere)\s+que)/,
  /\bmensaje\s+del\s+(?:sistema|administrador|desarrollador)/,
  // Portuguese.
  /\bo\s+(?:usuário|administrador|desenvolvedor|operador)\s+(?:já\s+)?(?:autorizou|aprovou|pediu|(?:diz|pede|exige|quer)\s+que)/,
  /\bmensagem\s+do\s+(?:sistema|administrador|desenvolvedor)/,
  // Italian.
  /\bl'(?:utente|amministratore|sviluppatore|operatore)\s+(?:ha\s+(?:già\s+)?(?:autorizzato|approvato|chiesto)|(?:dice|chiede|richiede|vuole)\s+che)/,
  /\bmessaggio\s+(?:dal|del)\s+(?:sistema|amministratore|sviluppatore)/,
  // Russian.
  /(?:пользователь|администратор|разработчик)\s+(?:уже\s+)?(?:разрешил|одобрил|велел|требует|приказал)/,
  /сообщение\s+от\s+(?:системы|администратора|разработчика)/,
  // Chinese.
  /(?:用户|用戶|管理员|管理員|开发者|開發者|系统|系統)(?:已经|已經|已)?(?:授权|授權|批准|同意|要求你|命令你)/,
  // Japanese.
  /(?:ユーザー|管理者|開発者|システム)(?:は|が)(?:すでに)?(?:許可|承認|指示|命令)/,
];

/**
 * Text addressed to the agent rather than to a human reader: "note to AI agents", "if you are an
 * AI", "aan de AI-assistent". Many projects write guidance for agents (an AGENTS.md), so being
 * addressed is no injection alone: the detector counts it with an order to run or fetch something.
 */
export const ADDRESSED_TO_AGENT: readonly RegExp[] = [
  // English.
  /\b(?:note|attention|message|instructions?|reminder|notice|important|psa)\s*(?:to|for)\s+(?:all\s+|any\s+|the\s+)?(?:ai|llms?|agents?|assistants?|models?|bots?|copilot|claude|chatgpt|gpt|coding\s+agents?)\b/,
  /\b(?:ai|llm|coding|language|autonomous)\s*(?:agents?|assistants?|models?)\s+(?:reading|processing|parsing|seeing|that\s+reads?|who\s+reads?)\b/,
  /\bif\s+you\s+are\s+(?:an?\s+)?(?:ai|llm|language\s+model|assistant|agent|bot|claude|chatgpt)\b/,
  /(?:^|\n)[ \t]*(?:dear|hey|hi|hello|attention)\s+(?:ai|assistant|agent|claude|chatgpt|model|llm)\b/,
  // Dutch.
  /\b(?:aan|voor)\s+(?:de\s+|alle\s+)?(?:ai|ai-assistent(?:en)?|assistent(?:en)?|agent(?:en)?|taalmodel(?:len)?)\b/,
  /\bals\s+(?:je|jij|u)\s+een\s+(?:ai|taalmodel|assistent|agent)\s+(?:bent|is)\b/,
  // German.
  /\b(?:an|für)\s+(?:die|den|alle)\s+(?:ki|ki-assistenten|assistenten|agenten|sprachmodelle?)\b/,
  /\bwenn\s+du\s+(?:eine\s+ki|ein\s+(?:sprachmodell|assistent|agent))\s+bist\b/,
  // French.
  /(?:\bpour|(?<![a-z])à)\s+l'(?:ia|assistant|agent)\b|\b(?:aux|pour\s+les)\s+(?:ia|assistants|agents)\b/,
  /\bsi\s+(?:tu\s+es|vous\s+êtes)\s+(?:une\s+ia|un\s+(?:assistant|agent|modèle))\b/,
  // Spanish, Portuguese, Italian.
  /\b(?:al|para\s+el)\s+(?:asistente|agente)\b|\b(?:a|para)\s+la\s+ia\b|\bsi\s+eres\s+(?:una\s+ia|un\s+(?:asistente|agente|modelo))\b/,
  /\b(?:ao|para\s+o)\s+(?:assistente|agente)\b|(?:\bpara\s+a|(?<![a-z])à)\s+ia\b|\bse\s+(?:você\s+é|és)\s+(?:uma\s+ia|um\s+(?:assistente|agente|modelo))\b/,
  /\b(?:all'|per\s+l')(?:assistente|agente|ia)\b|\bse\s+sei\s+(?:un'ia|un\s+(?:assistente|agente|modello))\b/,
  // Russian, Chinese, Japanese, Korean.
  /(?:для|к)\s+(?:ии|ассистента|агента|модели|нейросети)|если\s+ты\s+(?:ии|ассистент|агент|модель)/,
  /(?:致|给|給)(?:ai|人工智能|助手|模型|智能体)|如果你是(?:ai|人工智能|助手|模型)/,
  /(?:ai|アシスタント|エージェント)(?:へ|に)(?:の)?(?:指示|注意|お知らせ)|あなたが(?:ai|アシスタント)なら/,
  /(?:ai|어시스턴트|에이전트)(?:에게|한테)/,
];

/**
 * An order to act that names something to act on: a run, download, send, push or delete verb in
 * any of the languages. With {@link ADDRESSED_TO_AGENT} it makes an injection: a text addressed to
 * the agent that tells it to act.
 */
export const ACT_VERB =
  /\b(?:run|execute|exec|download|install|fetch|send|upload|post|push|delete|remove|disable|grant|voer|uitvoeren|draai|download|installeer|stuur|verwijder|führe|ausführen|lade|installiere|sende|lösche|exécute[rz]?|lance[rz]?|télécharge[rz]?|installe[rz]?|envoie[rz]?|supprime[rz]?|ejecuta[r]?|descarga[r]?|instala[r]?|envía|borra[r]?|executa[r]?|execute|baixe|instale|envie|apague|esegui|eseguire|scarica|installa|invia|cancella|запусти|выполни|скачай|установи|отправь|удали)\b|(?:执行|執行|运行|運行|下载|下載|安装|安裝|发送|發送|删除|刪除|実行|ダウンロード|インストール|送信|削除|실행|다운로드|설치|삭제)/;

/**
 * A download verb followed by a run verb ("download the script and run it", "haal het op en voer
 * het uit"), per language, the gap bounded: with a URL in the same text it is fetch-then-execute
 * said in words.
 */
export const DOWNLOAD_THEN_RUN: readonly RegExp[] = [
  /\b(?:download|fetch|grab|pull|get)\b[^\n]{0,120}\b(?:and|then|&|,)\s+(?:then\s+)?(?:run|execute|exec|launch|start|source|install)\b/,
  /\b(?:download|haal|laad)\b[^\n]{0,120}\b(?:en|dan)\s+(?:daarna\s+|vervolgens\s+)?(?:voer|start|draai|installeer)\b/,
  /\b(?:lade|hole)\b[^\n]{0,120}\b(?:herunter|ab)\b[^\n]{0,40}\b(?:und|dann)\s+(?:führe|starte|installiere)\b/,
  /\btélécharge[rz]?\b[^\n]{0,120}\b(?:et|puis)\s+(?:l'|les\s+)?(?:exécute[rz]?|lance[rz]?|installe[rz]?)\b/,
  /\bdescarga[r]?\b[^\n]{0,120}\b(?:y|luego)\s+(?:luego\s+)?(?:ejecuta|instala|lanza)/,
  /\b(?:baixe|baixar|descarregue)\b[^\n]{0,120}\b(?:e|depois)\s+(?:o\s+)?(?:execute|executa|instale|rode)\b/,
  /\bscarica(?:re)?\b[^\n]{0,120}\b(?:e|ed|poi)\s+(?:lo\s+)?(?:esegui|eseguilo|avvia|installa)/,
  /(?:скачай|загрузи|скачайте)[^\n]{0,120}(?:и|затем)\s+(?:запусти|выполни|установи)/,
  /(?:下载|下載)[^\n]{0,60}(?:运行|運行|执行|執行|安装|安裝)/,
  /ダウンロード[^\n]{0,60}(?:実行|起動|インストール)/,
  /다운로드[^\n]{0,60}(?:실행|설치)/,
];

/**
 * The word for each chat role, in the languages above: a line that opens with one of them and a
 * colon inside a tool result poses as a turn of the conversation.
 */
export const ROLE_WORDS =
  '(?:user|human|assistant|ai|system|gebruiker|mens|assistent|systeem|benutzer|nutzer|mensch|utilisateur|humain|système|usuario|humano|asistente|sistema|usuário|utilizador|assistente|utente|umano|пользователь|человек|ассистент|система|用户|用戶|人类|人類|助手|系统|系統|ユーザー|人間|アシスタント|システム|사용자|인간|어시스턴트|시스템)';
